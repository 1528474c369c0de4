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

  it("fails the gang on XID 95 at 01:00 and the 8-GPU job on XID 79 at 03:00; XID 63 stops nothing", () => {
    expect(failed).toEqual([
      ["pretrain", HOUR, 95],
      ["finetune", 3 * HOUR, 79],
    ]);
    expect(only(events, "GpuFault").map((e) => [e.xid, e.effect, e.affected.length])).toEqual([
      [63, "none", 0],
      [95, "gpu-reset", 1],
      [79, "node-reboot", 1],
    ]);
  });

  it("reboots the node after the drain delay and brings it back", () => {
    expect(events.filter((e) => e.kind.startsWith("Node")).map((e) => [e.kind, e.t])).toEqual([
      ["NodeCordoned", 3 * HOUR],
      ["NodeRebootStarted", 3.5 * HOUR],
      ["NodeReady", 3.5 * HOUR + 10 * MINUTE],
    ]);
  });
});
