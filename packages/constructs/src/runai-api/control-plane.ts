/**
 * The Run:ai control plane over one simulated cluster: it watches the simulation (domain events
 * and a view per interval), keeps a bounded history, and answers the Metrics, Telemetry and
 * read endpoints' questions with the same numbers the Run:ai and DCGM families carry, because
 * it reads the same GPU activity model at the same simulated times. Pure: no I/O; the HTTP
 * side lives in @gpusynth/emit.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { type ClusterView, type DomainEvent, WorkloadLedger } from "@gpusynth/sim";
import type { GpuActivityModel } from "../gpu/activity.js";
import { ClusterIndex } from "./cluster-index.js";
import { FREE, NOT_REPORTING, type Snapshot, SnapshotHistory } from "./history.js";
import type { MeasuredSeries } from "./metrics.js";

export interface ControlPlaneOptions {
  /** Maps simulated Unix ms to the time stamped on data (identity offline, wall clock live). */
  readonly clock?: (simulatedUnixMs: number) => number;
  /** How far back metrics can be queried, in stamped time (default 24 h). */
  readonly retentionMs?: number;
  /** Most snapshots kept; the step between them is retention ÷ this (default 1,440: a minute per day). */
  readonly maxSnapshots?: number;
  /** The step between kept snapshots, when it should be finer than retention ÷ maxSnapshots. */
  readonly stepMs?: number;
}

/** Prometheus' default lookback: a sample counts for a query time up to 5 minutes after it. */
export const LOOKBACK_MS = 300_000;
const DEFAULT_RETENTION_MS = 86_400_000;
const DEFAULT_MAX_SNAPSHOTS = 1_440;

export interface Measurement {
  readonly type: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly values: Array<{ value: string; timestamp: string }>;
}

export class ControlPlane {
  readonly clock: (simulatedUnixMs: number) => number;
  readonly history: SnapshotHistory;
  /** Workloads and pods, kept for the retention after they end (the control plane remembers them). */
  readonly workloads: WorkloadLedger;
  private indexed: ClusterIndex | undefined;
  private current: Snapshot | undefined;
  private lastView: ClusterView | undefined;

  constructor(
    readonly blueprint: Blueprint,
    private readonly activity: GpuActivityModel,
    options: ControlPlaneOptions = {},
  ) {
    this.clock = options.clock ?? ((ms) => ms);
    const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    const capacity = options.maxSnapshots ?? DEFAULT_MAX_SNAPSHOTS;
    const stepMs = options.stepMs ?? retentionMs / capacity;
    this.history = new SnapshotHistory(Math.max(1, Math.ceil(retentionMs / stepMs)), stepMs);
    this.workloads = new WorkloadLedger({ retentionMs });
  }

  /** Feeds a domain event; subscribe it to the simulation. */
  readonly record = (event: DomainEvent): void => this.workloads.record(event);

  /** Takes the cluster's state at the view's time: call after every advance of the simulation. */
  observe(view: ClusterView): void {
    this.indexed ??= new ClusterIndex(this.blueprint, view);
    this.workloads.addPendingPods(view);
    this.workloads.forgetEnded(view.now);
    this.lastView = view;
    this.current = this.snapshot(view);
    this.history.offer(this.current);
  }

  /** Whether the cluster has been observed at least once (nothing can be answered before). */
  get observed(): boolean {
    return this.current !== undefined;
  }

  get index(): ClusterIndex {
    if (this.indexed === undefined) throw new Error("the control plane has not observed the cluster yet");
    return this.indexed;
  }

  /** The latest view observed (for current values: telemetry, entity states). */
  get view(): ClusterView {
    if (this.lastView === undefined) throw new Error("the control plane has not observed the cluster yet");
    return this.lastView;
  }

  /** The latest snapshot, whether or not the history kept it. */
  get now(): Snapshot {
    if (this.current === undefined) throw new Error("the control plane has not observed the cluster yet");
    return this.current;
  }

  /** Stamped Unix ms of a simulated time (ms since the blueprint's start). */
  stamp(simulatedMs: number): number {
    return this.clock(this.blueprint.time.start + simulatedMs);
  }

  iso(simulatedMs: number): string {
    return new Date(this.stamp(simulatedMs)).toISOString();
  }

  /** Evaluates series at each grid time (stamped Unix ms) from the history; times without data are left out. */
  measure(type: string, series: readonly MeasuredSeries[], grid: readonly number[]): Measurement[] {
    return series.map((s) => {
      const values: Measurement["values"] = [];
      for (const t of grid) {
        const snapshot = this.history.at(t, LOOKBACK_MS);
        const v = snapshot === undefined ? undefined : s.value(snapshot);
        if (v !== undefined) values.push({ value: apiValueText(v), timestamp: new Date(t).toISOString() });
      }
      return s.labels === undefined ? { type, values } : { type, labels: s.labels, values };
    });
  }

  private snapshot(view: ClusterView): Snapshot {
    const index = this.index;
    const n = index.gpus.length;
    const util = new Uint8Array(n);
    const memUsedMiB = new Uint32Array(n);
    const holder = new Int32Array(n);
    index.gpus.forEach((gpu, g) => {
      const slot = index.nodes[index.gpuNode[g] as number];
      if (slot === undefined || slot.node.status === "rebooting" || gpu.health !== "ok") {
        holder[g] = NOT_REPORTING;
        return;
      }
      const reading = this.activity.readWork(gpu, slot.pool.model, view.now);
      util[g] = reading.gpuUtil;
      memUsedMiB[g] = reading.fbUsedMiB;
      const pod = gpu.holder === null ? undefined : this.workloads.pod(gpu.holder.uid);
      holder[g] = pod?.serial ?? FREE;
    });
    const workloads = [...view.pending, ...view.running].sort((a, b) => a.id - b.id);
    return {
      t: this.stamp(view.now),
      util,
      memUsedMiB,
      holder,
      queueAllocated: Float64Array.from(view.queues, (q) => q.allocated),
      queueAllocatedNonPreemptible: Float64Array.from(view.queues, (q) => q.allocatedNonPreemptible),
      workloads: {
        ids: Int32Array.from(workloads, (w) => w.id),
        running: Uint8Array.from(workloads, (w) => (w.phase === "Running" ? 1 : 0)),
        pool: Int16Array.from(workloads, (w) => index.poolIndex(w.pool ?? w.nodePools[0] ?? "")),
        pods: Uint16Array.from(workloads, (w) => w.pods.length + w.pendingPods.length),
        runningPods: Uint16Array.from(workloads, (w) => w.pods.length),
      },
    };
  }
}

/** The step between kept snapshots for a run observed every `intervalMs`: whole intervals, at most the default number of snapshots. */
export function snapshotStep(retentionMs: number, intervalMs: number): number {
  return Math.max(1, Math.ceil(retentionMs / DEFAULT_MAX_SNAPSHOTS / intervalMs)) * intervalMs;
}

/** API values are strings; numbers print without float noise. */
export function apiValueText(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Math.round(v * 1e6) / 1e6);
}
