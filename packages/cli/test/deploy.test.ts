/**
 * deploy/kubernetes and its hyperscale overlay as kubectl would apply them: rendered by the real
 * kustomize (5.6, Debian trixie's package, fetched by scripts/fetch-trixie.sh), every object valid
 * against the Kubernetes API schemas (kubernetes-models), and the StatefulSet wired as shards —
 * pod ordinal i runs `--shard i/N` with N = replicas, non-root on a read-only root filesystem —
 * with enough of them that no pod emits more than one shard's ceiling of its blueprint.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { MAX_SHARD_GPUS, shardGpus } from "@gpusynth/constructs";
import { StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import { Service } from "kubernetes-models/v1/Service";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const kustomize = process.env.GPUSYNTH_KUSTOMIZE ?? join(root, ".cache/kustomize/usr/bin/kustomize");
const found = existsSync(kustomize);
if (!found && process.env.CI === "true") throw new Error(`CI must provide kustomize: .ci/run fetches it to ${kustomize}`);

/** The API model of each kind the base renders: its constructor checks nothing, validate() everything. */
const MODELS: Record<string, (object: Record<string, unknown>) => { validate(): void }> = {
  "v1/Service": (o) => new Service(o),
  "apps/v1/StatefulSet": (o) => new StatefulSet(o),
};

describe.skipIf(!found).each([
  ["deploy/kubernetes", "blueprints/lab.yaml"],
  ["deploy/kubernetes/hyperscale", "blueprints/hyperscale.yaml"],
])("%s rendered by kustomize", (dir, blueprintFile) => {
  const rendered = found ? execFileSync(kustomize, ["build", join(root, dir)], { encoding: "utf8" }) : "";
  const objects = parseAllDocuments(rendered).map((d) => d.toJS() as Record<string, unknown> & { apiVersion: string; kind: string });

  it("renders only kinds it can validate, each valid against the Kubernetes API schema", () => {
    expect(objects.map((o) => `${o.apiVersion}/${o.kind}`).sort()).toEqual(["apps/v1/StatefulSet", "v1/Service"]);
    for (const object of objects) {
      const model = MODELS[`${object.apiVersion}/${object.kind}`];
      expect(model, object.kind).toBeDefined();
      expect(() => model?.(object).validate(), object.kind).not.toThrow();
    }
  });

  it("runs pod i of N replicas as shard i/N behind a headless Service, non-root and read-only", () => {
    const set = objects.find((o) => o.kind === "StatefulSet") as unknown as StatefulSet;
    const service = objects.find((o) => o.kind === "Service") as unknown as Service;
    const pod = set.spec?.template.spec;
    const container = pod?.containers[0];
    const env = new Map(container?.env?.map((e) => [e.name, e] as const));
    expect(env.get("SHARDS")?.value).toBe(String(set.spec?.replicas));
    expect(env.get("POD_INDEX")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.labels['apps.kubernetes.io/pod-index']");
    expect(container?.args?.join(" ")).toMatch(/gpusynth\.js run --shard "\$POD_INDEX\/\$SHARDS"/);
    expect(service.spec?.clusterIP).toBe("None");
    expect(set.spec?.serviceName).toBe(service.metadata?.name);
    expect(pod?.securityContext?.runAsNonRoot).toBe(true);
    expect(container?.securityContext?.readOnlyRootFilesystem).toBe(true);
    expect(container?.resources?.limits?.memory).toBeDefined();
  });

  it(`runs ${blueprintFile} with no pod over one shard's ceiling (--workers 1)`, () => {
    const set = objects.find((o) => o.kind === "StatefulSet") as unknown as StatefulSet;
    const container = set.spec?.template.spec?.containers[0];
    expect(container?.env?.find((e) => e.name === "BLUEPRINT")?.value).toBe(blueprintFile);
    expect(container?.args?.join(" ")).toMatch(/--workers 1 /);
    const { nodePools } = loadBlueprint(join(root, blueprintFile)).blueprint;
    const count = set.spec?.replicas ?? 1;
    for (let index = 0; index < count; index++) expect(shardGpus(nodePools, { index, count })).toBeLessThanOrEqual(MAX_SHARD_GPUS);
  });

  it("is refused by the validation when an object breaks the schema (the check can fail)", () => {
    const set = structuredClone(objects.find((o) => o.kind === "StatefulSet")) as Record<string, { replicas?: unknown }>;
    (set.spec as { replicas?: unknown }).replicas = "four";
    expect(() => MODELS["apps/v1/StatefulSet"]?.(set).validate()).toThrow();
  });
});
