/**
 * Invariants over long random runs with many seeds: whatever the arrivals, faults and
 * preemptions, the cluster's bookkeeping must stay physically possible.
 */
import { devicePluginIgnores } from "@gpusynth/blueprint";
import type { DomainEvent, Simulation } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";
import { DAY, fixture, HOUR, repoFile, runKeeping } from "./helpers.js";

type Phase = "Pending" | "Running" | "Completed" | "Failed" | "Cancelled";

/** Which event may move a workload from which phase, and to where. */
function transition(from: Phase | undefined, event: DomainEvent): Phase | "illegal" {
  switch (event.kind) {
    case "WorkloadSubmitted":
      return from === undefined ? "Pending" : "illegal";
    case "WorkloadUnschedulable":
    case "WorkloadPipelined":
      return from === "Pending" ? "Pending" : "illegal";
    case "WorkloadStarted":
      return from === "Pending" ? "Running" : "illegal";
    case "WorkloadPreempted":
      return from === "Running" ? "Pending" : "illegal";
    case "WorkloadCompleted":
      return from === "Running" ? "Completed" : "illegal";
    case "WorkloadFailed":
      return from === "Running" ? "Failed" : "illegal";
    case "WorkloadCancelled":
      return from === (event.whilePending ? "Pending" : "Running") ? "Cancelled" : "illegal";
    default:
      return "illegal";
  }
}

/** Checks the event stream as it happens; returns the problems found. */
function watch(simulation: Simulation): { problems: string[]; checkView: () => void; counts: Map<string, number> } {
  const problems: string[] = [];
  const counts = new Map<string, number>();
  const phase = new Map<number, Phase>();
  const pendingSince = new Map<number, number>();
  const holder = new Map<string, string>(); // GPU UUID → pod UID
  // GPUs the device plugin dropped after an XID it acts on, until their node reboots.
  const dropped = new Set<string>();
  const ignores = devicePluginIgnores(simulation.blueprint.faults.devicePluginDisableHealthchecks);
  const gpusOf = new Map(simulation.view().pools.flatMap((p) => p.nodes.map((n) => [n.name, n.gpus.map((g) => g.uuid)] as const)));
  let lastT = 0;
  simulation.onEvent((event) => {
    counts.set(event.kind, (counts.get(event.kind) ?? 0) + 1);
    if (event.t < lastT) problems.push(`time went backwards at ${event.kind}`);
    lastT = event.t;
    if (event.kind === "GpuFault" && !ignores(event.xid)) dropped.add(event.gpu.uuid);
    if (event.kind === "NodeReady") for (const uuid of gpusOf.get(event.node) ?? []) dropped.delete(uuid);
    if (event.kind === "WorkloadStarted")
      for (const pod of event.pods)
        for (const gpu of pod.gpus)
          if (dropped.has(gpu.uuid)) problems.push(`pod ${pod.name} placed on ${gpu.uuid}, which the device plugin dropped`);
    if (!("workload" in event)) return;
    const id = event.workload.id;
    const next = transition(phase.get(id), event);
    if (next === "illegal") problems.push(`illegal ${event.kind} from ${phase.get(id)} for workload ${id}`);
    else phase.set(id, next);

    if (event.kind === "WorkloadSubmitted") pendingSince.set(id, event.t);
    if (event.kind === "WorkloadStarted") {
      if (event.waitedMs !== event.t - (pendingSince.get(id) ?? Number.NaN)) problems.push(`wait of ${id} is not start − pending since`);
      let gpus = 0;
      for (const pod of event.pods) {
        for (const gpu of pod.gpus) {
          gpus++;
          if (holder.has(gpu.uuid)) problems.push(`GPU ${gpu.uuid} given to ${pod.uid} while ${holder.get(gpu.uuid)} holds it`);
          holder.set(gpu.uuid, pod.uid);
        }
      }
      if (gpus !== event.workload.gpus) problems.push(`workload ${id} started with ${gpus} GPUs, asked for ${event.workload.gpus}`);
    }
    // A preemptor's pods are pipelined onto GPUs its victims still hold: nothing changes hands yet.
    if (
      "pods" in event &&
      event.kind !== "WorkloadStarted" &&
      event.kind !== "WorkloadUnschedulable" &&
      event.kind !== "WorkloadPipelined"
    ) {
      for (const pod of event.pods) {
        for (const gpu of pod.gpus) {
          if (holder.get(gpu.uuid) !== pod.uid) problems.push(`${event.kind}: pod ${pod.uid} released GPU ${gpu.uuid} it did not hold`);
          holder.delete(gpu.uuid);
        }
      }
      if (event.kind === "WorkloadPreempted") pendingSince.set(id, event.t);
    }
  });

  const checkView = () => {
    const view = simulation.view();
    for (const pool of view.pools) {
      let held = 0;
      for (const node of pool.nodes) {
        for (const gpu of node.gpus) {
          if (gpu.holder === null) continue;
          held++;
          if (gpu.health !== "ok") problems.push(`GPU ${gpu.uuid} is ${gpu.health} but held by ${gpu.holder.name}`);
          if (!gpu.holder.gpus.includes(gpu)) problems.push(`GPU ${gpu.uuid} names a holder that does not list it`);
        }
        // A GPU kept for a pipelined job (reservedFor) is free to no other pod until its victims have terminated.
        const free = node.gpus.filter((g) => g.health === "ok" && g.pluginHealthy && g.holder === null && g.reservedFor === null).length;
        if (free !== node.freeGpus) problems.push(`node ${node.name} counts ${node.freeGpus} free GPUs, has ${free}`);
      }
      const allocated = view.queues.filter((q) => q.pool === pool.name && q.level === "project").reduce((sum, q) => sum + q.allocated, 0);
      if (allocated !== held) problems.push(`pool ${pool.name}: queues account ${allocated} GPUs, ${held} are held`);
      if (held > pool.nodes.length * pool.spec.gpusPerNode) problems.push(`pool ${pool.name}: ${held} GPUs held, more than exist`);
    }
    for (const w of view.running) {
      const gpus = w.pods.flatMap((p) => p.gpus);
      if (gpus.length !== w.gpus) problems.push(`running workload ${w.id} holds ${gpus.length} GPUs, asked for ${w.gpus}`);
      for (const pod of w.pods)
        for (const gpu of pod.gpus) if (gpu.holder !== pod) problems.push(`pod ${pod.name} lists a GPU it does not hold`);
    }
    for (const q of view.queues) {
      if (q.allocated < 0 || q.allocatedNonPreemptible < 0 || q.allocatedNonPreemptible > q.allocated)
        problems.push(`queue ${q.name}/${q.pool} accounting broken`);
    }
  };
  return { problems, checkView, counts };
}

interface Checked {
  readonly problems: string[];
  readonly counts: Map<string, number>;
  /** Event kinds seen, WorkloadCancelled split by whilePending. */
  readonly kinds: Set<string>;
}

/** Runs a blueprint hour by hour, checking the view each hour; each (file, seed) runs once per file of tests. */
const checkedRuns = new Map<string, Checked>();
function checkedRun(file: string, days: number, seed: number): Checked {
  const key = `${file}@${seed}`;
  let checked = checkedRuns.get(key);
  if (checked === undefined) {
    // Watched as it runs, none of its events kept (days of scheduling cycles).
    const { simulation } = runKeeping([], file, 0, seed);
    const { problems, checkView, counts } = watch(simulation);
    const kinds = new Set<string>();
    simulation.onEvent((event) => kinds.add(event.kind === "WorkloadCancelled" ? `${event.kind}/${event.whilePending}` : event.kind));
    for (let t = HOUR; t <= days * DAY; t += HOUR) {
      simulation.runUntil(t);
      checkView();
      if (problems.length > 0) break;
    }
    checked = { problems, counts, kinds };
    checkedRuns.set(key, checked);
  }
  return checked;
}

// Two days: the first holds every kind of event (scripts/gen-golden.mjs), the second a grown backlog.
const STRESS = { name: "stress fixture", file: fixture("stress.yaml"), days: 2, seeds: [11, 12, 13, 14, 15, 16] };

describe.each([{ name: "lab blueprint", file: repoFile("blueprints/lab.yaml"), days: 7, seeds: [1, 2, 3, 4, 5, 6] }, STRESS])(
  "invariants over long runs: $name",
  ({ file, days, seeds }) => {
    it.each(seeds)("seed %i keeps every GPU, pod and queue consistent", (seed) => {
      const { problems, counts } = checkedRun(file, days, seed);
      expect(problems.slice(0, 5)).toEqual([]);
      expect(counts.get("WorkloadStarted") ?? 0).toBeGreaterThan(0);
    });
  },
);

it("the stress fixture exercises every kind of transition", () => {
  const kinds = new Set<string>();
  // The same runs the invariants check (computed once, whichever test comes first).
  for (const seed of STRESS.seeds.slice(0, 3)) for (const kind of checkedRun(STRESS.file, STRESS.days, seed).kinds) kinds.add(kind);
  expect([...kinds].sort()).toEqual(
    [
      "GpuFault",
      "GpuResetCompleted",
      "GpuResetStarted",
      "NodeCordoned",
      "NodeReady",
      "NodeRebootStarted",
      "SchedulingCycle",
      "WorkloadCancelled/false",
      "WorkloadCancelled/true",
      "WorkloadCompleted",
      "WorkloadFailed",
      "WorkloadPipelined",
      "WorkloadPreempted",
      "WorkloadStarted",
      "WorkloadSubmitted",
      "WorkloadUnschedulable",
    ].sort(),
  );
});
