/**
 * A gang that loses a rank, across signals (blueprints/scenarios/gpu-fault.yaml: XID 95 at 01:00
 * on the GPU of the 16-GPU job's second rank): for the staleness grace period the failed rank is
 * Failed and its GPUs free while the other rank still runs, then KAI's StaleGangEviction evicts
 * the other (its Evict event, its log line and its eviction counter) and the job fails.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type LogRecordOut, type Sample, type TargetSamples, targetsKept } from "@gpusynth/constructs";
import type { DomainEvent } from "@gpusynth/sim";
import { beforeAll, describe, expect, it } from "vitest";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/gpu-fault.yaml", import.meta.url));
const SECOND = 1_000;
const HOUR = 3_600_000;
/** The frames read: before the fault, during the grace period, after the eviction. */
const BEFORE = HOUR - 30 * SECOND;
const DURING = HOUR + 30 * SECOND;
const AFTER = HOUR + 90 * SECOND;

describe("a gang that loses a rank, across signals", () => {
  const { blueprint } = loadBlueprint(scenario);
  const events: DomainEvent[] = [];
  const logs: LogRecordOut[] = [];
  const frames = new Map<number, readonly TargetSamples[]>();

  beforeAll(() => {
    const run = new ClusterRun(blueprint, {
      logs: true,
      observers: [(e) => events.push(e)],
      sources: ["dcgm-exporter", "kube-state-metrics", "kai-scheduler"],
    });
    drive(run, every(30 * SECOND, { toMs: HOUR + 2 * 60 * SECOND }), (frame) => {
      if ([BEFORE, DURING, AFTER].includes(frame.simulatedMs)) frames.set(frame.simulatedMs, targetsKept(frame.targets));
      logs.push(...frame.logs);
    });
  });

  const lost = () => events.find((e) => e.kind === "RankFailed") as DomainEvent & { kind: "RankFailed" };
  const failed = () =>
    events.find((e) => e.kind === "WorkloadFailed" && e.workload.name === "pretrain") as DomainEvent & { kind: "WorkloadFailed" };
  const samples = (t: number, name: string, match: Record<string, string> = {}): Sample[] =>
    (frames.get(t) ?? []).flatMap((target) =>
      target.samples.filter((s) => s.family.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)),
    );
  /** kube-state-metrics' phase of each of the job's pods at `t`, by pod name. */
  const phases = (t: number) =>
    Object.fromEntries(
      samples(t, "kube_pod_status_phase", { namespace: lost().workload.namespace })
        .filter((s) => s.value === 1 && (s.labels.pod ?? "").startsWith("pretrain"))
        .map((s) => [s.labels.pod, s.labels.phase]),
    );

  it("fails the rank on the faulted GPU and keeps the other running until KAI evicts it, a grace period later", () => {
    const rank = lost();
    const job = failed();
    expect([rank.t, rank.pod.node, job.t, job.staleGang, job.pods.map((p) => p.node)]).toEqual([
      HOUR,
      "train-node-1",
      HOUR + 61 * SECOND,
      { minMember: 2, staleSince: HOUR + SECOND },
      ["train-node-0"],
    ]);
    const other = job.pods[0]?.name as string;
    expect([phases(BEFORE), phases(DURING), phases(AFTER)]).toEqual([
      { [rank.pod.name]: "Running", [other]: "Running" },
      { [rank.pod.name]: "Failed", [other]: "Running" },
      // KAI deletes the pod it evicts: only the failed rank is left to list.
      { [rank.pod.name]: "Failed" },
    ]);
  });

  it("frees the failed rank's GPUs at once: no pod on them, and the queue's allocation down by them", () => {
    const rank = lost();
    const podsOn = (t: number, node: string) =>
      new Set(samples(t, "DCGM_FI_DEV_GPU_UTIL", { Hostname: node }).map((s) => s.labels.pod ?? "(none)"));
    expect([podsOn(DURING, "train-node-1"), podsOn(DURING, "train-node-0")]).toEqual([
      new Set(["(none)"]),
      new Set([failed().pods[0]?.name]),
    ]);
    const allocated = (t: number) => samples(t, "kai_queue_allocated_gpus").find((s) => (s.labels.queue_name ?? "").includes("llm"))?.value;
    expect([allocated(BEFORE), allocated(DURING), allocated(AFTER)]).toEqual([16, 16 - rank.pod.gpus.length, 0]);
  });

  it("evicts the other rank as KAI does: an Evict event with the gang message, the log line, the eviction counter", () => {
    const job = failed();
    const other = job.pods[0]?.name as string;
    const evict = logs.filter((r) => r.attributes["k8s.event.reason"] === "Evict").map((r) => [r.timeMs, r.body]);
    expect(evict).toEqual([
      [
        blueprint.time.start + HOUR + 61 * SECOND,
        `Workload doesn't meet the minimum required number of pods (2), evicting remaining pod: ${job.workload.namespace}/${other}`,
      ],
    ]);
    const line = logs.filter((r) => r.body.includes("due its job being a stale job"));
    expect(line.map((r) => r.body.replace(/^.*\] /, ""))).toEqual([
      `Evicted task: <${job.workload.namespace}/${other}> due its job being a stale job, its status: <Running>`,
    ]);
    expect(line[0]?.timeMs).toBeGreaterThanOrEqual(blueprint.time.start + HOUR + 61 * SECOND);
    expect(
      samples(AFTER, "kai_pod_group_evicted_pods_total", { action: "stalegangeviction" }).map((s) => [s.labels.namespace, s.value]),
    ).toEqual([[job.workload.namespace, 1]]);
  });
});
