/**
 * kube-state-metrics' shard of an object: the same bucket as its Go code gives. The expected
 * values were printed by Go 1.26 running hash/fnv's New64a and github.com/dgryski/go-jump@ba001c3
 * (the version kube-state-metrics v2.13.0's go.mod requires) on these UIDs, not by this code.
 */
import { fileURLToPath } from "node:url";
import { type Blueprint, loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, type Sample } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { fnv1a64, jumpHash, shardOfUid } from "../src/kube-state-metrics/sharding.js";
import { systemOf } from "../src/system-workloads.js";

/** UID, FNV-1a 64, and the bucket for 1, 2, 3, 8, 16, 100 and 1000 shards. */
const GO: ReadonlyArray<readonly [string, string, readonly number[]]> = [
  ["", "14695981039346656037", [0, 1, 1, 1, 13, 90, 266]],
  ["a", "12638187200555641996", [0, 1, 2, 2, 12, 31, 163]],
  ["00000000-0000-0000-0000-000000000000", "8950988243607919089", [0, 1, 1, 1, 11, 20, 211]],
  ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "12032414262666749856", [0, 1, 2, 3, 3, 89, 385]],
  ["7c9e6679-7425-40de-944b-e07fc1f90ae7", "1981998860462451123", [0, 0, 0, 0, 0, 79, 293]],
  ["e0c0f7a4-8f37-4d4e-9b4e-6a1f0e2d3c4b", "17437815064229528845", [0, 0, 2, 6, 13, 59, 292]],
  ["kube-system", "16097492053868589918", [0, 1, 1, 1, 15, 15, 179]],
];
const SHARDS = [1, 2, 3, 8, 16, 100, 1000];

describe("kube-state-metrics' sharding of objects by UID", () => {
  it.each(GO)("puts %j where kube-state-metrics v2.13.0 does", (uid, fnv, buckets) => {
    expect(String(fnv1a64(uid))).toBe(fnv);
    expect(SHARDS.map((n) => jumpHash(fnv1a64(uid), n))).toEqual(buckets);
  });

  it("spreads UIDs evenly, and a shard added moves objects only onto it", () => {
    const uids = Array.from({ length: 8000 }, (_, i) => `5b1c3d2e-0a4f-4e6b-9c7d-${String(i).padStart(12, "0")}`);
    const counts = new Array<number>(8).fill(0);
    for (const uid of uids) counts[shardOfUid(uid, 8)] = (counts[shardOfUid(uid, 8)] as number) + 1;
    for (const n of counts) expect(Math.abs(n - 1000)).toBeLessThan(120);
    // Jump hashing's promise: from 8 shards to 9, an object stays or moves to shard 8.
    for (const uid of uids) {
      const after = shardOfUid(uid, 9);
      expect(after === shardOfUid(uid, 8) || after === 8).toBe(true);
    }
  });
});

const HOUR = 3_600_000;
const lab = loadBlueprint(fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url))).blueprint;
const withShards = (shards: number): Blueprint => ({ ...lab, telemetry: { ...lab.telemetry, kubeStateMetrics: { shards } } });

/** kube-state-metrics' targets at 14:00 on lab.yaml's first day: its metrics port's samples and its own metrics', by instance. */
function ksmTargets(blueprint: Blueprint): { host: string; samples: readonly Sample[]; self: readonly Sample[] }[] {
  let last: Frame | undefined;
  drive(new ClusterRun(blueprint, { sources: ["kube-state-metrics"] }), every(HOUR, { toMs: 14 * HOUR }), (frame) => {
    last = frame;
  });
  const targets = (last as Frame).targets.filter((t) => t.target.job === "kube-state-metrics");
  return targets
    .filter((t) => t.target.port === 8080)
    .map((t) => ({
      host: t.target.host,
      samples: t.samples,
      self: targets.find((s) => s.target.port === 8081 && s.target.host === t.target.host)?.samples ?? [],
    }));
}

/** A sample as text, to compare runs by. */
const line = (s: Sample) => `${s.family.name}${JSON.stringify(s.labels)} ${s.value}`;
/** The object a sample is about: its pod's UID, node, namespace, or controller. */
const objectOf = (s: Sample): string =>
  s.labels.uid ??
  (s.labels.daemonset !== undefined ? `DaemonSet/${s.labels.daemonset}` : undefined) ??
  (s.labels.deployment !== undefined ? `Deployment/${s.labels.deployment}` : undefined) ??
  (s.labels.replicaset !== undefined ? `ReplicaSet/${s.labels.replicaset}` : undefined) ??
  (s.labels.node !== undefined ? `Node/${s.labels.node}` : `Namespace/${s.labels.namespace}`);

describe("kube-state-metrics in 4 shards (lab.yaml, telemetry.kubeStateMetrics.shards: 4)", () => {
  const whole = ksmTargets(lab);
  const shards = ksmTargets(withShards(4));
  const system = systemOf(withShards(4));

  it("runs as a StatefulSet of 4 pods, each a target of its own that knows its shard", () => {
    const pods = system.pods.filter((p) => p.workload.name === "kube-state-metrics");
    expect(pods.map((p) => [p.name, p.owner.kind, p.owner.name])).toEqual(
      [0, 1, 2, 3].map((i) => [`kube-state-metrics-${i}`, "StatefulSet", "kube-state-metrics"]),
    );
    expect(shards.map((s) => s.host)).toEqual(pods.map((p) => p.ip));
    shards.forEach(({ self }, i) => {
      expect(
        self.filter((s) => s.family.name === "kube_state_metrics_shard_ordinal").map((s) => [s.labels.shard_ordinal, s.value]),
      ).toEqual([[String(i), i]]);
      expect(self.filter((s) => s.family.name === "kube_state_metrics_total_shards").map((s) => s.value)).toEqual([4]);
    });
    // Every shard has objects; no shard is the Deployment of the standard manifests.
    for (const { samples } of shards) expect(samples.length).toBeGreaterThan(0);
    const all = shards.flatMap((s) => s.samples);
    expect(all.some((s) => s.labels.deployment === "kube-state-metrics" || s.labels.replicaset?.startsWith("kube-state-metrics-"))).toBe(
      false,
    );
    expect(all.filter((s) => s.family.name === "kube_pod_owner" && s.labels.owner_kind === "StatefulSet")).toHaveLength(4);
  });

  it("serves each object on one shard only, the one its UID hashes to", () => {
    const shardOf = new Map<string, number>();
    shards.forEach(({ samples }, i) => {
      for (const s of samples) {
        const object = objectOf(s);
        expect(shardOf.get(object) ?? i, `${object} on two shards`).toBe(i);
        shardOf.set(object, i);
        if (s.labels.uid !== undefined) expect(shardOfUid(s.labels.uid, 4)).toBe(i);
      }
    });
    expect(new Set(shardOf.values())).toEqual(new Set([0, 1, 2, 3]));
  });

  it("serves the users' pods, the nodes and the namespaces exactly as one instance does", () => {
    // The system pods differ (four kube-state-metrics pods, so other system pods' addresses on
    // their nodes move); everything else is the same series with the same values.
    const systemNamespaces = new Set(system.workloads.map((w) => w.namespace));
    const outsideSystem = (samples: readonly Sample[]) =>
      samples
        .filter((s) => s.labels.uid === undefined || !systemNamespaces.has(s.labels.namespace as string))
        .filter((s) => s.labels.daemonset === undefined && s.labels.deployment === undefined && s.labels.replicaset === undefined)
        .map(line)
        .sort();
    const sharded = outsideSystem(shards.flatMap((s) => s.samples));
    // Seven users' pods by 14:00, each with its node, namespace and some thirty series.
    expect(sharded.filter((l) => l.startsWith("kube_pod_info{")).length).toBeGreaterThanOrEqual(5);
    expect(sharded).toEqual(outsideSystem(whole.flatMap((s) => s.samples)));
  });
});
