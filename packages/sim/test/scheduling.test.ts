/**
 * Scheduling scenarios, one small blueprint each (fixtures/), checked against the Run:ai /
 * KAI-Scheduler behaviour docs/scheduling.md describes. Workload names come from the fixtures.
 */
import { loadBlueprint } from "@gpusynth/blueprint";
import { type DomainEvent, Simulation } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";
import { eventsOf, fixture, HOUR, MINUTE, only, run, runKeeping } from "./helpers.js";

describe("over-quota borrowing and reclaim", () => {
  const { blueprint, events } = run(fixture("reclaim.yaml"), 6 * HOUR);
  const [borrower, owner] = blueprint.submissions.map((s) => s.name) as [string, string];

  it("lets a preemptible workload use idle GPUs beyond its project's deserved quota", () => {
    const [start] = only(eventsOf(events, borrower), "WorkloadStarted");
    expect(start?.t).toBeLessThanOrEqual(1_000);
    expect(start?.pods.flatMap((p) => p.gpus)).toHaveLength(6);
  });

  it("reclaims the borrowed GPUs when the owning project needs its deserved quota", () => {
    const [preempted] = only(eventsOf(events, borrower), "WorkloadPreempted");
    expect(preempted?.action).toBe("reclaim");
    expect(preempted?.preemptor.name).toBe(owner);
    // Pipelined onto the borrower's GPUs in the eviction's cycle, bound in the first cycle after
    // the borrower's pods have terminated (within the grace period, 30 s by default).
    const [pipelined] = only(eventsOf(events, owner), "WorkloadPipelined");
    expect(pipelined?.t).toBe(preempted?.t);
    const [ownerStart] = only(eventsOf(events, owner), "WorkloadStarted");
    const grace = blueprint.time.terminationGracePeriod;
    const terminated = preempted?.terminatesAt ?? 0;
    expect(terminated).toBeGreaterThan(preempted?.t ?? 0);
    expect(terminated).toBeLessThanOrEqual((preempted?.t ?? 0) + grace);
    expect(ownerStart?.t).toBeGreaterThanOrEqual(terminated);
    expect(ownerStart?.t).toBeLessThanOrEqual(terminated + blueprint.time.schedulingPeriod);
    // Submitted just before a cycle: one period to the eviction, the grace at most, one period to the bind.
    expect(ownerStart?.waitedMs).toBeLessThanOrEqual(grace + 2 * blueprint.time.schedulingPeriod);
  });

  it("returns the reclaimed workload to Pending and restarts it when GPUs free up, keeping its progress", () => {
    const starts = only(eventsOf(events, borrower), "WorkloadStarted");
    const [ownerDone] = only(eventsOf(events, owner), "WorkloadCompleted");
    expect(starts.map((s) => s.attempt)).toEqual([1, 2]);
    expect(starts[1]?.t).toBeGreaterThanOrEqual(ownerDone?.t ?? Number.POSITIVE_INFINITY);
    const [done] = only(eventsOf(events, borrower), "WorkloadCompleted");
    const ranBefore = (only(eventsOf(events, borrower), "WorkloadPreempted")[0]?.t ?? 0) - (starts[0]?.t ?? 0);
    expect((done?.t ?? 0) - (starts[1]?.t ?? 0)).toBe(2 * HOUR - ranBefore);
  });
});

describe("queue order in allocate", () => {
  // job_order_by_queue.go walks the queue tree: departments are compared first, each by its own
  // figures with its best project's next job, then the projects within the chosen department.
  const { events } = run(fixture("queue-order.yaml"), HOUR);

  it("compares departments before their projects: the job within its department's deserved quota starts first", () => {
    const started = only(events, "WorkloadStarted").filter((e) => e.t >= 10 * MINUTE);
    expect(started[0]?.workload.name).toBe("b-team-train");
    expect(started[0]?.t).toBeLessThanOrEqual(10 * MINUTE + 1_000);
    // Department A's job comes second: no GPU is left, so it reclaims its own department's over-quota project.
    const [reclaimed] = only(events, "WorkloadPreempted");
    expect([reclaimed?.workload.name, reclaimed?.preemptor.name]).toEqual(["a-over-train", "a-within-train"]);
    expect(started.map((e) => e.workload.name)).toContain("a-within-train");
  });
});

describe("priority preemption inside a project", () => {
  const { blueprint, events } = run(fixture("preempt.yaml"), 4 * HOUR);
  const [low, high] = blueprint.submissions.map((s) => s.name) as [string, string];

  it("evicts the lower-priority preemptible workload for a higher-priority one", () => {
    const [preempted] = only(eventsOf(events, low), "WorkloadPreempted");
    expect(preempted?.action).toBe("preempt");
    expect(preempted?.preemptor.name).toBe(high);
    const [highStart] = only(eventsOf(events, high), "WorkloadStarted");
    const terminated = preempted?.terminatesAt ?? 0;
    expect(highStart?.t).toBeGreaterThanOrEqual(terminated);
    expect(highStart?.t).toBeLessThanOrEqual(terminated + blueprint.time.schedulingPeriod);
  });

  it("keeps the victim's pods on their GPUs until they have terminated, within the grace period", () => {
    const [preempted] = only(eventsOf(events, low), "WorkloadPreempted");
    const terminated = preempted?.terminatesAt ?? 0;
    expect(terminated - (preempted?.t ?? 0)).toBeLessThanOrEqual(blueprint.time.terminationGracePeriod);
    const simulation = new Simulation(blueprint);
    simulation.runUntil(terminated - 1);
    const victim = simulation.view().running.find((w) => w.name === low);
    expect(victim?.pods.flatMap((p) => p.gpus).every((g) => g.holder?.workload === victim)).toBe(true);
    expect(simulation.view().pending.find((w) => w.name === high)?.pipelinedUntil).toBe(terminated);
    simulation.runUntil(terminated);
    expect(simulation.view().running.find((w) => w.name === low)).toBeUndefined();
  });

  it("gives the preemptor GPUs the victim held", () => {
    const [lowStart] = only(eventsOf(events, low), "WorkloadStarted");
    const [highStart] = only(eventsOf(events, high), "WorkloadStarted");
    const victimGpus = new Set(lowStart?.pods.flatMap((p) => p.gpus.map((g) => g.uuid)));
    for (const gpu of highStart?.pods.flatMap((p) => p.gpus) ?? []) expect(victimGpus.has(gpu.uuid)).toBe(true);
  });
});

describe("non-preemptible workloads stay within deserved quota", () => {
  const { blueprint, events } = run(fixture("non-preemptible.yaml"), 4 * HOUR);
  const [first, second] = blueprint.submissions.map((s) => s.name) as [string, string];

  it("keeps the second workspace pending with NonPreemptibleOverQuota while 4 GPUs sit idle", () => {
    const [pending] = only(eventsOf(events, second), "WorkloadUnschedulable");
    expect(pending?.reasons).toEqual([
      expect.objectContaining({ reason: "NonPreemptibleOverQuota", requested: 2, deserved: 4, allocatedNonPreemptible: 4 }),
    ]);
  });

  it("starts it once the first workspace ends", () => {
    const [firstDone] = only(eventsOf(events, first), "WorkloadCompleted");
    const [secondStart] = only(eventsOf(events, second), "WorkloadStarted");
    expect(firstDone?.t).toBe(2 * HOUR + 1_000);
    expect(secondStart?.t).toBeGreaterThanOrEqual(firstDone?.t ?? 0);
    expect((secondStart?.t ?? 0) - (firstDone?.t ?? 0)).toBeLessThanOrEqual(1_000);
  });
});

describe("limits", () => {
  const { blueprint, events } = run(fixture("limit.yaml"), 4 * HOUR);
  const [, second] = blueprint.submissions.map((s) => s.name) as [string, string];

  it("keeps a workload pending with OverLimit when its project is at its limit", () => {
    const [pending] = only(eventsOf(events, second), "WorkloadUnschedulable");
    expect(pending?.reasons).toEqual([expect.objectContaining({ reason: "OverLimit", limit: 4, allocated: 4, requested: 2 })]);
    const [start] = only(eventsOf(events, second), "WorkloadStarted");
    expect(start?.t).toBeGreaterThan(2 * HOUR);
  });
});

describe("the proportion plugin's division", () => {
  it("has each department request what its projects request, in every cycle from the first", () => {
    // The limit fixture submits at its first instant, so its first cycle already divides a demand.
    const { events } = run(fixture("limit.yaml"), 4 * HOUR);
    const cycles = only(events, "SchedulingCycle");
    expect(cycles[0]?.division.some((q) => q.level === "project" && q.requested > 0)).toBe(true);
    for (const cycle of cycles)
      for (const division of [cycle.division, cycle.divisionAfter])
        for (const department of division.filter((q) => q.level === "department")) {
          const projects = division.filter((q) => q.parent === department.name && q.nodePool === department.nodePool);
          expect(department.requested).toBe(projects.reduce((sum, q) => sum + q.requested, 0));
        }
  });
});

describe("users who give up (pendingPatience)", () => {
  // Held by the project's limit while `first` runs (2 h): one gives up after 30 minutes, the other would wait 3 hours.
  const { simulation, events } = run(fixture("patience.yaml"), 30 * MINUTE);
  const atHalfHour = simulation.view().pending.map((w) => w.name);
  simulation.runUntil(4 * HOUR);

  it("deletes a workload still pending when its user's patience runs out, and it never starts", () => {
    const [cancelled] = only(eventsOf(events, "impatient"), "WorkloadCancelled");
    expect(cancelled).toMatchObject({ t: MINUTE + 30 * MINUTE, whilePending: true, pods: [] });
    expect(only(eventsOf(events, "impatient"), "WorkloadStarted")).toEqual([]);
    expect(atHalfHour).toEqual(["impatient", "patient"]);
    // Gone from the backlog: the scheduler attempts it no more.
    const later = only(events, "SchedulingCycle").filter((c) => c.t > (cancelled?.t ?? Number.POSITIVE_INFINITY));
    expect(later.length).toBeGreaterThan(0);
    for (const cycle of later) expect(cycle.allocate.map((a) => a.workload.name)).not.toContain("impatient");
  });

  it("keeps a workload that has started, back in the queue after a preemption, past its user's patience", () => {
    // reclaim.yaml's borrower runs from the start, is reclaimed at 10 minutes and waits until the owner is done (1 h 10 m).
    const { blueprint } = loadBlueprint(fixture("reclaim.yaml"));
    const submissions = blueprint.submissions.map((s) => (s.name === "big-train" ? { ...s, pendingPatience: 30 * MINUTE } : s));
    const simulation = new Simulation({ ...blueprint, submissions });
    const events: DomainEvent[] = [];
    simulation.onEvent((event) => events.push(event));
    simulation.runUntil(4 * HOUR);
    expect(only(eventsOf(events, "big-train"), "WorkloadPreempted")[0]?.t).toBeLessThan(30 * MINUTE);
    expect(only(eventsOf(events, "big-train"), "WorkloadCancelled")).toEqual([]);
    expect(only(eventsOf(events, "big-train"), "WorkloadStarted").map((s) => s.attempt)).toEqual([1, 2]);
  });

  it("lets a workload that starts within its user's patience run to its end", () => {
    const [start] = only(eventsOf(events, "patient"), "WorkloadStarted");
    expect(start?.t).toBeGreaterThanOrEqual(2 * HOUR);
    expect(only(eventsOf(events, "patient"), "WorkloadCompleted")).toHaveLength(1);
    expect(only(eventsOf(events, "patient"), "WorkloadCancelled")).toEqual([]);
  });
});

describe("gang scheduling", () => {
  const { blueprint, events } = run(fixture("gang.yaml"), 3 * HOUR);
  const [small, gang] = blueprint.submissions.map((s) => s.name) as [string, string];

  it("starts no pod of the gang until every pod fits, then starts all of them together", () => {
    const starts = only(eventsOf(events, gang), "WorkloadStarted");
    const [smallDone] = only(eventsOf(events, small), "WorkloadCompleted");
    expect(starts).toHaveLength(1);
    expect(starts[0]?.t).toBeGreaterThanOrEqual(smallDone?.t ?? Number.POSITIVE_INFINITY);
    expect(starts[0]?.pods).toHaveLength(2);
    expect(new Set(starts[0]?.pods.map((p) => p.node)).size).toBe(2);
    for (const pod of starts[0]?.pods ?? []) expect(pod.gpus).toHaveLength(8);
    expect(only(eventsOf(events, gang), "WorkloadUnschedulable")[0]?.reasons[0]?.reason).toBe("Unschedulable");
  });
});

describe("GPU faults", () => {
  const { blueprint, events } = run(fixture("gpu-fault.yaml"), 6 * HOUR);
  const [victim, waitsForReboot, waitsForReset] = blueprint.submissions.map((s) => s.name) as [string, string, string];
  const node = blueprint.faults.injections[0]?.node as string;

  it("fails the workload on a GPU that falls off the bus (XID 79), naming node, GPU and XID", () => {
    const [failed] = only(eventsOf(events, victim), "WorkloadFailed");
    expect(failed?.t).toBe(HOUR);
    expect(failed?.cause).toEqual({ kind: "GpuFault", node, gpu: expect.objectContaining({ index: 3 }), xid: 79 });
  });

  it("cordons the node, reboots it after the drain delay, and schedules on it only when it is back", () => {
    const kinds = events.filter((e) => e.kind.startsWith("Node")).map((e) => [e.kind, e.t]);
    expect(kinds).toEqual([
      ["NodeCordoned", HOUR],
      ["NodeRebootStarted", HOUR + 30 * MINUTE],
      ["NodeReady", HOUR + 40 * MINUTE],
    ]);
    // Once the restarted device plugin has registered its GPUs (5 to 20 s), at the next cycle.
    const [start] = only(eventsOf(events, waitsForReboot), "WorkloadStarted");
    expect(start?.t).toBeGreaterThanOrEqual(HOUR + 40 * MINUTE + 5_000);
    expect(start?.t).toBeLessThanOrEqual(HOUR + 40 * MINUTE + 21_000);
  });

  it("fails the workload on an uncontained ECC error (XID 95); the GPU is reset but the device plugin keeps it out", () => {
    const [failed] = only(eventsOf(events, waitsForReboot), "WorkloadFailed");
    expect(failed?.cause).toMatchObject({ kind: "GpuFault", xid: 95 });
    const reset = only(events, "GpuResetCompleted")[0];
    expect(reset?.t).toBe(3 * HOUR + 5 * MINUTE);
    // k8s-device-plugin marks the GPU unhealthy on XID 95 and never healthy again: the node has
    // seven allocatable GPUs until it reboots, so the 8-GPU job keeps waiting after the reset.
    expect(only(eventsOf(events, waitsForReset), "WorkloadStarted")).toEqual([]);
    const reasons = only(eventsOf(events, waitsForReset), "WorkloadUnschedulable").at(-1)?.reasons;
    expect(reasons?.[0]?.reason).toBe("Unschedulable");
  });
});

describe("how evicted pods terminate", () => {
  // A day of the stress fixture: hundreds of reclaims and preemptions of every workload type.
  const { blueprint, events: evictions } = runKeeping(["WorkloadPreempted"], fixture("stress.yaml"), 24 * HOUR, 11);
  const grace = blueprint.time.terminationGracePeriod;
  const took = (e: (typeof evictions)[number]) => e.terminatesAt - e.t;

  it("ends on SIGTERM within seconds, or at the grace period for single-pod training that ignores it", () => {
    expect(evictions.length).toBeGreaterThan(100);
    const quick = evictions.filter((e) => took(e) < grace);
    for (const e of quick) expect(took(e)).toBeGreaterThanOrEqual(1_000);
    for (const e of quick) expect(took(e)).toBeLessThanOrEqual(8_000);
    // Only single-pod training runs as PID 1 without a SIGTERM handler.
    const killed = evictions.filter((e) => took(e) === grace);
    expect(new Set(killed.map((e) => e.workload.type))).toEqual(new Set(["training"]));
    const training = evictions.filter((e) => e.workload.type === "training");
    expect(killed.length / training.length).toBeGreaterThan(0.25);
    expect(killed.length / training.length).toBeLessThan(0.75);
    // The quick exits spread over the seconds, not one fixed time.
    expect(new Set(quick.map((e) => Math.round(took(e) / 1_000))).size).toBeGreaterThan(5);
  });

  it("lets each workload terminate the same way at every eviction", () => {
    const ways = new Map<string, Set<boolean>>();
    for (const e of evictions) ways.set(e.workload.uid, (ways.get(e.workload.uid) ?? new Set()).add(took(e) === grace));
    expect([...ways.values()].every((way) => way.size === 1)).toBe(true);
    expect([...ways.values()].length).toBeLessThan(evictions.length);
  });
});
