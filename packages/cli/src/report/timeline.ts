/**
 * What the report draws, recorded from an offline run: GPUs allocated per node pool and pods
 * waiting per project, sampled at a fixed step, and the failures, preemptions, GPU faults and
 * node reboots as they happened. Built from the simulation's view and its domain events only.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { ClusterRun } from "@gpusynth/constructs";
import { type DomainEvent, type FailureCause, type Summary, SummaryCollector, unhandledEvent } from "@gpusynth/sim";

export type MomentKind = "failed" | "evicted" | "gpu-fault" | "node-reboot";

/** One happening on the timeline, with the words a tooltip shows. */
export interface Moment {
  readonly t: number;
  readonly kind: MomentKind;
  readonly text: string;
}

export interface ChartSeries {
  readonly name: string;
  readonly values: number[];
}

export interface Timeline {
  readonly cluster: string;
  readonly startUnixMs: number;
  readonly durationMs: number;
  readonly seed: number;
  /** Simulated time of each sample, ms since the start. */
  readonly times: number[];
  /** GPUs held by pods, per node pool, with the pool's GPU count as its capacity. */
  readonly allocation: ReadonlyArray<ChartSeries & { readonly capacity: number }>;
  /** Pods waiting to be scheduled, per project. */
  readonly backlog: readonly ChartSeries[];
  readonly moments: readonly Moment[];
  readonly summary: Summary;
}

/** Samples are taken at most this many times, whatever the duration. */
const MAX_SAMPLES = 720;

function causeText(cause: FailureCause): string {
  switch (cause.kind) {
    case "GpuFault":
      return `XID ${cause.xid} on ${cause.node} GPU ${cause.gpu.index}`;
    case "NodeReboot":
      return `node ${cause.node} rebooted`;
    case "BackoffLimitExceeded":
      return `container kept failing (${cause.restarts} restarts, backoffLimit reached)`;
    case "Evicted":
      return `pod ${cause.pod} evicted by the kubelet (memory pressure on ${cause.node})`;
    case "Error":
      return "container error";
  }
}

function momentOf(event: DomainEvent): Moment | undefined {
  switch (event.kind) {
    case "WorkloadFailed":
      return { t: event.t, kind: "failed", text: `${event.workload.name} (${event.workload.project}) failed: ${causeText(event.cause)}` };
    case "WorkloadPreempted":
      return {
        t: event.t,
        kind: "evicted",
        text: `${event.workload.name} (${event.workload.project}) evicted by ${event.action} for ${event.preemptor.name} (${event.preemptor.project})`,
      };
    case "GpuFault":
      return { t: event.t, kind: "gpu-fault", text: `XID ${event.xid} on ${event.node} GPU ${event.gpu.index} (${event.effect})` };
    case "NodeRebootStarted":
      return { t: event.t, kind: "node-reboot", text: `${event.node} rebooting` };
    // Kinds this fold ignores, listed so that a new kind is a compile error until decided here.
    case "WorkloadSubmitted":
    case "WorkloadUnschedulable":
    case "WorkloadStarted":
    case "WorkloadCompleted":
    case "WorkloadCancelled":
    case "ContainerCrashed":
    case "ContainerRestarted":
    case "NodeMemoryPressure":
    case "NodeMemoryPressureRelieved":
    case "GpuResetStarted":
    case "GpuResetCompleted":
    case "NodeCordoned":
    case "NodeReady":
    case "SchedulingCycle":
      return undefined;
    default:
      return unhandledEvent(event);
  }
}

export function recordTimeline(
  blueprint: Blueprint,
  durationMs: number,
  seed?: number,
  /** Called with the simulated ms reached as the run goes. */
  onProgress?: (simulatedMs: number) => void,
): Timeline {
  const summary = SummaryCollector.forBlueprint(blueprint);
  const moments: Moment[] = [];
  const observe = (event: DomainEvent) => {
    summary.record(event);
    const moment = momentOf(event);
    if (moment !== undefined) moments.push(moment);
  };
  const run = new ClusterRun(blueprint, { ...(seed === undefined ? {} : { seed }), metrics: false, observers: [observe] });

  const stepMs = Math.max(60_000, Math.ceil(durationMs / MAX_SAMPLES / 60_000) * 60_000);
  const times: number[] = [];
  const pools = blueprint.nodePools.map((p) => ({ name: p.name, capacity: p.nodes * p.gpusPerNode, values: [] as number[] }));
  const backlog = blueprint.projects.map((p) => ({ name: p.name, values: [] as number[] }));
  for (let t = 0; t <= durationMs; t = t === durationMs ? t + 1 : Math.min(t + stepMs, durationMs)) {
    run.advanceTo(t);
    onProgress?.(t);
    const view = run.simulation.view();
    times.push(t);
    view.pools.forEach((pool, i) => {
      let held = 0;
      for (const node of pool.nodes) for (const gpu of node.gpus) if (gpu.holder !== null) held++;
      pools[i]?.values.push(held);
    });
    const waiting = new Map<string, number>();
    for (const w of view.pending) waiting.set(w.project, (waiting.get(w.project) ?? 0) + w.pendingPods.length);
    for (const series of backlog) series.values.push(waiting.get(series.name) ?? 0);
  }
  return {
    cluster: blueprint.cluster.name,
    startUnixMs: blueprint.time.start,
    durationMs,
    seed: seed ?? blueprint.seed,
    times,
    allocation: pools,
    backlog,
    moments,
    summary: summary.summary(durationMs),
  };
}
