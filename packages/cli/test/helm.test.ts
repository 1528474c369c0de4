/**
 * deploy/helm/gpusynth as `helm install` would apply it (Helm v4, built from helm.sh/helm/v4 by
 * scripts/build-tools.sh): `helm lint` accepts it, `helm template` renders with the default values
 * and with values-hyperscale.yaml objects valid against the Kubernetes API schemas, and the shards
 * it renders are exactly what the kustomize base and its hyperscale overlay render (the same pods,
 * arguments and sizes). Its options — the control-plane API with its token from a Secret, a
 * Prometheus Operator ScrapeConfig discovering every shard — render as documented.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import { Service } from "kubernetes-models/v1/Service";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { builtTool } from "./built-tools.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const chart = join(root, "deploy/helm/gpusynth");
const helm = builtTool("helm");
const kustomize = process.env.GPUSYNTH_KUSTOMIZE ?? join(root, ".cache/kustomize/usr/bin/kustomize");

type K8sObject = Record<string, unknown> & { apiVersion: string; kind: string; spec?: Record<string, unknown> };
const objectsOf = (yaml: string): K8sObject[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null)
    .sort((a, b) => a.kind.localeCompare(b.kind));
const render = (...args: string[]) => objectsOf(execFileSync(helm, ["template", "gpusynth", chart, ...args], { encoding: "utf8" }));
const valid = (o: K8sObject) => (o.kind === "StatefulSet" ? new StatefulSet(o as never) : new Service(o as never)).validate();

describe.skipIf(helm === "" || !existsSync(kustomize)).each([
  ["the default values", [], "deploy/kubernetes"],
  ["values-hyperscale.yaml", ["-f", join(chart, "values-hyperscale.yaml")], "deploy/kubernetes/hyperscale"],
])("the Helm chart with %s", (_, values, overlay) => {
  it("passes helm lint", () => {
    expect(() => execFileSync(helm, ["lint", chart, ...values], { encoding: "utf8" })).not.toThrow();
  });

  it("renders objects valid against the Kubernetes API schemas, and the same shards as the kustomize render", () => {
    const rendered = render(...values);
    expect(rendered.map((o) => `${o.apiVersion}/${o.kind}`)).toEqual(["v1/Service", "apps/v1/StatefulSet"]);
    for (const object of rendered) expect(() => valid(object), object.kind).not.toThrow();
    expect(rendered).toEqual(objectsOf(execFileSync(kustomize, ["build", join(root, overlay)], { encoding: "utf8" })));
  });
});

describe.skipIf(helm === "")("the Helm chart's options", () => {
  it("serves the control-plane API with its bearer token from a Secret", () => {
    const set = render("--set", "api.enabled=true").find((o) => o.kind === "StatefulSet") as unknown as StatefulSet;
    expect(() => valid(set as unknown as K8sObject)).not.toThrow();
    const container = set.spec?.template.spec?.containers[0];
    expect(container?.args?.join(" ")).toMatch(/--listen 0\.0\.0\.0:9464 --api 0\.0\.0\.0:8080 "\$blueprint"/);
    expect(container?.env?.find((e) => e.name === "GPUSYNTH_API_TOKEN")?.valueFrom?.secretKeyRef).toEqual({
      name: "gpusynth-api-token",
      key: "token",
    });
    expect(container?.ports?.map((p) => p.containerPort)).toEqual([9464, 8080]);
  });

  it("discovers every shard's targets through its /sd with a Prometheus Operator ScrapeConfig", () => {
    const scrape = render("--set", "scrapeConfig.enabled=true", "--namespace", "telemetry").find((o) => o.kind === "ScrapeConfig");
    expect(scrape?.apiVersion).toBe("monitoring.coreos.com/v1alpha1");
    expect(((scrape?.spec?.httpSDConfigs ?? []) as Array<{ url: string }>).map((c) => c.url)).toEqual(
      [0, 1, 2, 3].map((i) => `http://gpusynth-${i}.gpusynth.telemetry.svc:9464/sd`),
    );
  });
});
