/**
 * What a blueprint's simulated cluster actually did, in the terms the published traces use
 * (the published traces, section labels as in the header of blueprints/lab.yaml: arrivals per GPU-day, job sizes and run times, waits, final status,
 * preemption, idle allocated GPUs, hardware interruptions, allocation). Measured from the
 * domain events and from sampling the cluster, never from the blueprint's own parameters.
 */
import type { Blueprint, CalibrationMetric } from "@gpusynth/blueprint";
import { ClusterRun, drive, every } from "@gpusynth/constructs";
import { type DomainEvent, firstRun, type WorkloadEnding, WorkloadLedger, type WorkloadRecord } from "@gpusynth/sim";

export type Measurement = Record<CalibrationMetric, number | undefined>;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** GPUs are read every 5 minutes, as a DCGM-based utilisation trace samples them. */
const SAMPLE_MS = 5 * 60_000;
/** A project whose mean allocation reaches this share of its deserved quota is saturated (gpusynth's "Suggested blueprint parameters", blueprints/lab.yaml header). */
const SATURATED_SHARE = 0.85;

/** The q-quantile (0…1) of values by the nearest-rank method; undefined when empty. */
export function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

const mean = (values: readonly number[]) => (values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length);
const share = (part: number, whole: number) => (whole === 0 ? undefined : part / whole);

/**
 * Runs `warmupMs` of simulated time unmeasured, then measures `durationMs`: workloads submitted
 * and GPU samples taken in the measured window count.
 */
export function measure(
  blueprint: Blueprint,
  durationMs: number,
  warmupMs: number,
  seed?: number,
  /** Called with the simulated ms reached (warm-up included) as the run goes. */
  onProgress?: (simulatedMs: number) => void,
): Measurement {
  // Every workload is kept to the end: the measured window is what calibration reads.
  const ledger = new WorkloadLedger({ retentionMs: Number.POSITIVE_INFINITY });
  let gpuFaults = 0;
  const countFaults = (event: DomainEvent) => {
    if (event.kind === "GpuFault" && event.t >= warmupMs) gpuFaults++;
  };
  const run = new ClusterRun(blueprint, {
    ...(seed === undefined ? {} : { seed }),
    metrics: false,
    readsGpus: true,
    observers: [ledger.record, countFaults],
  });

  const gpus = blueprint.nodePools.reduce((sum, p) => sum + p.nodes * p.gpusPerNode, 0);
  const deserved = new Map(blueprint.projects.map((p) => [p.name, Object.values(p.nodePools).reduce((sum, q) => sum + q.deserved, 0)]));
  const projectGpuSamples = new Map<string, number>();
  const activity = run.metrics.activity;
  let allocatedSamples = 0;
  let idleAllocatedSamples = 0;
  let samples = 0;
  drive(run, every(SAMPLE_MS, { fromMs: warmupMs, toMs: warmupMs + durationMs }), ({ simulatedMs: t, view }) => {
    onProgress?.(t);
    samples++;
    for (const pool of view.pools) {
      for (const node of pool.nodes) {
        for (const gpu of node.gpus) {
          if (gpu.holder === null) continue;
          allocatedSamples++;
          const project = gpu.holder.workload.project;
          projectGpuSamples.set(project, (projectGpuSamples.get(project) ?? 0) + 1);
          if (Math.round(activity.read(gpu, pool.model, t).gpuUtil) === 0) idleAllocatedSamples++;
        }
      }
    }
  });

  const all = [...ledger.workloads()].filter((w) => w.submittedAt >= warmupMs).map(measured);
  const started = all.filter((w) => w.firstStartedAt !== undefined);
  const waitsS = started.map((w) => ((w.firstStartedAt as number) - w.submittedAt) / 1000);
  // Traces report the run time of every finished GPU job, whatever its end (§1e in the header of blueprints/lab.yaml).
  const runS = all
    .filter((w) => w.ended !== undefined && w.firstStartedAt !== undefined)
    .map((w) => ((w.endedAt as number) - (w.firstStartedAt as number)) / 1000);
  const ended = all.filter((w) => w.ended !== undefined);
  const saturated = new Set(
    [...deserved]
      .filter(([project, quota]) => quota > 0 && (projectGpuSamples.get(project) ?? 0) / samples >= SATURATED_SHARE * quota)
      .map(([p]) => p),
  );
  const preemptible = all.filter((w) => w.preemptible && w.firstStartedAt !== undefined);
  const days = durationMs / DAY_MS;

  return {
    gpuWorkloadsPerGpuDay: gpus === 0 ? undefined : all.length / gpus / days,
    diurnalPeakToMean: diurnalPeakToMean(all, blueprint),
    gpusPerWorkloadMedian: quantile(
      all.map((w) => w.gpus),
      0.5,
    ),
    gpusPerWorkloadP90: quantile(
      all.map((w) => w.gpus),
      0.9,
    ),
    durationMedianSeconds: quantile(runS, 0.5),
    durationP90Seconds: quantile(runS, 0.9),
    waitMedianSeconds: quantile(waitsS, 0.5),
    waitMeanSeconds: mean(waitsS),
    saturatedWaitMeanSeconds: mean(
      started.filter((w) => saturated.has(w.project)).map((w) => ((w.firstStartedAt as number) - w.submittedAt) / 1000),
    ),
    completedShare: share(ended.filter((w) => w.ended === "completed").length, ended.length),
    cancelledShare: share(ended.filter((w) => w.ended === "cancelled").length, ended.length),
    failedShare: share(ended.filter((w) => w.ended === "failed").length, ended.length),
    preemptedShare: share(preemptible.filter((w) => w.preempted).length, preemptible.length),
    idleAllocatedShare: share(idleAllocatedSamples, allocatedSamples),
    hardwareInterruptionsPerGpuDay: gpus === 0 ? undefined : gpuFaults / gpus / days,
    meanAllocation: gpus === 0 || samples === 0 ? undefined : allocatedSamples / samples / gpus,
  };
}

/** What calibration reads of a workload record. */
interface Measured {
  readonly project: string;
  readonly gpus: number;
  readonly preemptible: boolean;
  readonly submittedAt: number;
  readonly firstStartedAt: number | undefined;
  readonly preempted: boolean;
  readonly ended: WorkloadEnding | undefined;
  readonly endedAt: number | undefined;
}

function measured(w: WorkloadRecord): Measured {
  return {
    project: w.ref.project,
    gpus: w.ref.gpus,
    preemptible: w.ref.preemptible,
    submittedAt: w.submittedAt,
    firstStartedAt: firstRun(w)?.startedAt,
    preempted: w.runs.some((run) => run.endedBy === "preempted"),
    ended: w.ending ?? undefined,
    endedAt: w.completedAt ?? w.deletedAt ?? undefined,
  };
}

/** Weekday submissions by local hour of day: the busiest hour's count over the hourly mean. */
function diurnalPeakToMean(workloads: readonly Measured[], blueprint: Blueprint): number | undefined {
  const offsetMs = blueprint.time.utcOffsetHours * HOUR_MS;
  const byHour = new Array<number>(24).fill(0);
  let weekday = 0;
  for (const w of workloads) {
    const local = new Date(blueprint.time.start + w.submittedAt + offsetMs);
    const day = local.getUTCDay();
    if (day === 0 || day === 6) continue;
    byHour[local.getUTCHours()] = (byHour[local.getUTCHours()] as number) + 1;
    weekday++;
  }
  return weekday === 0 ? undefined : Math.max(...byHour) / (weekday / 24);
}
