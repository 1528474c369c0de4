/** The shipped scenarios do what their comments say, at the times they say. */
import { describe, expect, it } from "vitest";
import { eventsOf, HOUR, MINUTE, only, repoFile, run } from "./helpers.js";

describe("blueprints/scenarios/quota-exhaustion.yaml", () => {
  const { events } = run(repoFile("blueprints/scenarios/quota-exhaustion.yaml"), 6 * HOUR);
  const reasonOf = (name: string) => only(eventsOf(events, name), "WorkloadUnschedulable")[0]?.reasons[0]?.reason;
  const startOf = (name: string) => only(eventsOf(events, name), "WorkloadStarted")[0]?.t;

  it("keeps a workspace beyond the deserved quota waiting with NonPreemptibleOverQuota while GPUs idle", () => {
    expect(reasonOf("ws-c")).toBe("NonPreemptibleOverQuota");
  });

  it("lets preemptible training run over quota up to the limit, then holds it with OverLimit", () => {
    expect(startOf("train-a")).toBeLessThan(10 * MINUTE + 2_000);
    expect(reasonOf("train-b")).toBe("OverLimit");
  });

  it("drains the backlog when the workspaces end at 02:00", () => {
    for (const name of ["ws-c", "train-b", "train-c", "ws-d", "train-d"]) expect(startOf(name), name).toBeGreaterThanOrEqual(2 * HOUR);
    expect(only(events, "WorkloadCompleted").length).toBe(8);
  });
});

describe("blueprints/scenarios/gpu-fault.yaml", () => {
  const { events } = run(repoFile("blueprints/scenarios/gpu-fault.yaml"), 5 * HOUR);
  const failed = only(events, "WorkloadFailed").map((e) => [
    e.workload.name,
    e.t,
    e.cause.kind === "GpuFault" ? e.cause.xid : e.cause.kind,
  ]);

  it("fails the gang's rank on XID 95 at 01:00 and the 4-GPU job on XID 79 at 03:00; XID 63 stops nothing", () => {
    // KAI stamps the gang stale at the cycle after the fault (01:00:01) and evicts the other rank
    // 60 s later (its default staleness grace period): the job fails then, of the XID.
    expect(failed).toEqual([
      ["pretrain", HOUR + 61_000, 95],
      ["finetune-small", 3 * HOUR, 79],
    ]);
    expect(only(events, "RankFailed").map((e) => [e.workload.name, e.t, e.pod.node, e.pod.gpus.map((g) => g.index)])).toEqual([
      ["pretrain", HOUR, "train-node-1", [0, 1, 2, 3, 4, 5, 6, 7]],
    ]);
    const gang = only(events, "WorkloadFailed")[0];
    expect([gang?.pods.map((p) => p.node), gang?.staleGang]).toEqual([["train-node-0"], { minMember: 2, staleSince: HOUR + 1_000 }]);
    expect(
      only(events, "SchedulingCycle").flatMap((c) => (c.staleGangEviction ?? []).map((e) => [c.t, e.workload.name, e.pods.length])),
    ).toEqual([[HOUR + 61_000, "pretrain", 1]]);
    expect(only(events, "GpuFault").map((e) => [e.xid, e.effect, e.affected.length])).toEqual([
      [63, "none", 0],
      [95, "gpu-reset", 1],
      [79, "node-reboot", 1],
    ]);
  });

  it("keeps the GPUs the device plugin dropped (XID 63, XID 95) out: the 8-GPU job waits for the reboot", () => {
    const starts = only(events, "WorkloadStarted").map((e) => [e.workload.name, e.t, e.pods.map((p) => p.node).join(" ")]);
    // Each at the scheduling cycle after its moment (a second later); after the reboot, once the
    // restarted device plugin has registered the node's GPUs (5 to 20 s after NodeReady).
    const back = 3.5 * HOUR + 10 * MINUTE;
    expect(starts.slice(0, 2)).toEqual([
      ["pretrain", 1_000, "train-node-0 train-node-1"],
      ["finetune-small", HOUR + 6 * MINUTE + 1_000, "train-node-0"],
    ]);
    expect(starts[2]?.[0]).toBe("finetune");
    expect(starts[2]?.[2]).toBe("train-node-0");
    expect((starts[2]?.[1] as number) - back).toBeGreaterThanOrEqual(5_000 + 1_000);
    expect((starts[2]?.[1] as number) - back).toBeLessThanOrEqual(20_000 + 1_000);
    expect(starts).toHaveLength(3);
  });

  it("reboots the node after the drain delay and brings it back", () => {
    expect(events.filter((e) => e.kind.startsWith("Node")).map((e) => [e.kind, e.t])).toEqual([
      ["NodeCordoned", 3 * HOUR],
      ["NodeRebootStarted", 3.5 * HOUR],
      ["NodeReady", 3.5 * HOUR + 10 * MINUTE],
    ]);
  });
});

describe("blueprints/scenarios/crash-loop.yaml", () => {
  const SECOND = 1_000;
  const { events } = run(repoFile("blueprints/scenarios/crash-loop.yaml"), 2 * HOUR);
  const bad = eventsOf(events, "train-bad");
  const started = only(bad, "WorkloadStarted")[0]?.t as number;

  it("restarts the failing container in place after the kubelet's back-off: 10 s doubling per restart", () => {
    expect(only(bad, "ContainerCrashed").map((e) => [e.t - started, e.backoffMs])).toEqual([
      [2 * MINUTE, 10 * SECOND],
      [4 * MINUTE + 10 * SECOND, 20 * SECOND],
      [6 * MINUTE + 30 * SECOND, 40 * SECOND],
      [9 * MINUTE + 10 * SECOND, 80 * SECOND],
      [12 * MINUTE + 30 * SECOND, 160 * SECOND],
      [17 * MINUTE + 10 * SECOND, 300 * SECOND],
    ]);
    expect(only(bad, "ContainerRestarted").map((e) => e.restarts)).toEqual([1, 2, 3, 4, 5, 6]);
    // Restarting in place: the same pod on the same GPUs, never back to Pending.
    expect(new Set(only(bad, "ContainerRestarted").map((e) => JSON.stringify(e.pods))).size).toBe(1);
    expect(only(bad, "WorkloadStarted").length).toBe(1);
  });

  it("fails the workload when the failure recurs with the backoffLimit spent, at 00:34", () => {
    const failed = only(bad, "WorkloadFailed");
    expect(failed.map((e) => [e.t - started, e.cause])).toEqual([
      [24 * MINUTE + 10 * SECOND, { kind: "BackoffLimitExceeded", restarts: 6 }],
    ]);
    expect(started).toBe(10 * MINUTE + SECOND);
  });

  it("fails a restartPolicy Never workload once, without restarts", () => {
    const once = eventsOf(events, "train-once");
    expect(only(once, "ContainerCrashed")).toEqual([]);
    expect(only(once, "WorkloadFailed").map((e) => e.cause.kind)).toEqual(["Error"]);
  });
});

describe("blueprints/scenarios/memory-pressure.yaml", () => {
  const { events } = run(repoFile("blueprints/scenarios/memory-pressure.yaml"), 2 * HOUR);

  it("evicts the lowest-priority pod with the most GPUs at 00:20 and fails its workload", () => {
    const pressure = only(events, "NodeMemoryPressure");
    expect(pressure.map((e) => [e.t, e.node, e.victim?.workload.name])).toEqual([[20 * MINUTE, "shared-node-0", "train-large"]]);
    expect(only(events, "WorkloadFailed").map((e) => [e.workload.name, e.t, e.cause])).toEqual([
      ["train-large", 20 * MINUTE, { kind: "Evicted", node: "shared-node-0", pod: "train-large-0-0" }],
    ]);
  });

  it("leaves the other workloads running and relieves the pressure after the 5-minute transition period", () => {
    expect(only(events, "NodeMemoryPressureRelieved").map((e) => e.t)).toEqual([25 * MINUTE]);
    expect(only(events, "WorkloadStarted").length).toBe(3);
    expect(only(events, "WorkloadCompleted").length + only(events, "WorkloadFailed").length).toBe(1);
  });
});

describe("blueprints/scenarios/oom-kill.yaml", () => {
  const { events } = run(repoFile("blueprints/scenarios/oom-kill.yaml"), 2 * HOUR);
  const SECOND = 1000;

  it("kills train-leaky at its memory limit 15 minutes after each start, restarts it after 10, 20 and 40 s, and fails it at 01:06", () => {
    // Bound by the first scheduling cycle after its submission, a second in.
    const bound = 5 * MINUTE + SECOND;
    expect(only(eventsOf(events, "train-leaky"), "ContainerCrashed").map((e) => [e.t - bound, e.reason, e.backoffMs])).toEqual([
      [15 * MINUTE, "OOMKilled", 10 * SECOND],
      [30 * MINUTE + 10 * SECOND, "OOMKilled", 20 * SECOND],
      [45 * MINUTE + 30 * SECOND, "OOMKilled", 40 * SECOND],
    ]);
    expect(only(events, "WorkloadFailed").map((e) => [e.workload.name, e.t - bound, e.cause])).toEqual([
      ["train-leaky", 61 * MINUTE + 10 * SECOND, { kind: "BackoffLimitExceeded", restarts: 3 }],
    ]);
  });

  it("leaves train-ok, which sets no memory limit, running", () => {
    expect(only(eventsOf(events, "train-ok"), "WorkloadStarted").length).toBe(1);
    expect(eventsOf(events, "train-ok").some((e) => e.kind === "ContainerCrashed" || e.kind === "WorkloadFailed")).toBe(false);
  });
});
