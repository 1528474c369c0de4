/**
 * What the report draws, recorded from an offline run: at a fixed step, GPUs held per node pool
 * and per project, each GPU's utilisation and holder, each node's state, and the pods waiting
 * with the reason the scheduler last gave; as they happen, the failures, preemptions, GPU faults
 * and node reboots, and every workload's wait. Built from the simulation's view, its domain
 * events and the GPU activity model dcgm-exporter's series come from — never from telemetry.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type GpuActivityModel } from "@gpusynth/constructs";
import {
  type ClusterView,
  type DeepReadonly,
  type DomainEvent,
  type FailureCause,
  type Gpu,
  type Node,
  type PendingReason,
  type Summary,
  SummaryCollector,
  unhandledEvent,
} from "@gpusynth/sim";

export type MomentKind = "failed" | "evicted" | "gpu-fault" | "node-reboot";

/** One happening on the timeline, with a short label drawn beside it and the full text. */
export interface Moment {
  readonly t: number;
  readonly kind: MomentKind;
  readonly label: string;
  readonly text: string;
  /** The node a GPU fault or reboot struck. */
  readonly node?: string;
  readonly xid?: number;
}

export interface ChartSeries {
  readonly name: string;
  readonly values: number[];
}

/** A row of the utilisation heatmap and the workload timeline: one GPU, or a run of GPUs. */
export interface GpuRow {
  readonly label: string;
  /** Mean utilisation (%) of the row's reporting GPUs per sample; null when none reports. */
  readonly utilisation: Array<number | null>;
}

/** A pod on a GPU from one sample to another (the end is the first sample without it). */
export interface Occupancy {
  readonly row: number;
  readonly from: number;
  readonly to: number;
  readonly workload: string;
  readonly project: string;
}

/** A node's state per sample, worst first when several hold. */
export const NODE_STATES = ["Ready", "MemoryPressure", "cordoned", "NotReady (rebooting)"] as const;
export type NodeState = (typeof NODE_STATES)[number];

export interface NodeRow {
  readonly name: string;
  /** Index into NODE_STATES per sample. */
  readonly states: number[];
}

/** Why pods wait, as the scheduler last said (PendingReason), or not yet tried. */
export const WAIT_REASONS = ["NotYetAttempted", "Unschedulable", "OverLimit", "NonPreemptibleOverQuota"] as const;

/** A workload's wait before its first start, or until the end of the run if it never started. */
export interface Wait {
  readonly type: string;
  readonly waitedMs: number;
  readonly started: boolean;
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
  /** GPUs held by pods, per project, with the project's deserved GPUs over all pools. */
  readonly projectAllocation: ReadonlyArray<ChartSeries & { readonly quota: number }>;
  /** Pods waiting to be scheduled, per project. */
  readonly backlog: readonly ChartSeries[];
  /** Pods waiting to be scheduled, per reason (WAIT_REASONS order). */
  readonly backlogByReason: readonly ChartSeries[];
  /** How many GPUs each row stands for (1: one row per GPU). */
  readonly gpusPerRow: number;
  readonly gpuRows: readonly GpuRow[];
  /** Pods on the GPUs of the first rows, when rows are single GPUs (empty otherwise). */
  readonly occupancy: readonly Occupancy[];
  readonly nodes: readonly NodeRow[];
  readonly moments: readonly Moment[];
  readonly waits: readonly Wait[];
  readonly summary: Summary;
}

/** Samples are taken at most this many times, whatever the duration. */
const MAX_SAMPLES = 288;
/** Rows of the heatmap: a GPU each up to this many GPUs, else runs of consecutive GPUs. */
export const MAX_GPU_ROWS = 96;

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
    case "OOMKilled":
      return "container killed at its memory limit (OOMKilled)";
  }
}

function momentOf(event: DomainEvent): Moment | undefined {
  switch (event.kind) {
    case "WorkloadFailed":
      return {
        t: event.t,
        kind: "failed",
        label: event.workload.name,
        text: `${event.workload.name} (${event.workload.project}) failed: ${causeText(event.cause)}${event.staleGang === undefined ? "" : ", its other ranks evicted by KAI as a stale gang"}`,
      };
    case "WorkloadPreempted":
      return {
        t: event.t,
        kind: "evicted",
        label: event.workload.name,
        text: `${event.workload.name} (${event.workload.project}) evicted by ${event.action} for ${event.preemptor.name} (${event.preemptor.project})`,
      };
    case "GpuFault":
      return {
        t: event.t,
        kind: "gpu-fault",
        label: `XID ${event.xid} ${event.node}/${event.gpu.index}`,
        text: `XID ${event.xid} on ${event.node} GPU ${event.gpu.index} (${event.effect})`,
        node: event.node,
        xid: event.xid,
      };
    case "NodeRebootStarted":
      return { t: event.t, kind: "node-reboot", label: event.node, text: `${event.node} rebooting`, node: event.node };
    // Kinds this fold ignores, listed so that a new kind is a compile error until decided here.
    // (A rank's failure shows as its job's failure when KAI evicts the rest.)
    case "RankFailed":
    case "GpuPowerCap":
    case "WorkloadSubmitted":
    case "WorkloadUnschedulable":
    case "WorkloadStarted":
    case "WorkloadPipelined":
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

/** Waits: a workload's first start after its submission; the rest still waiting at the end. */
class WaitRecorder {
  private readonly submitted = new Map<number, { t: number; type: string }>();
  readonly waits: Wait[] = [];
  /** The reason the scheduler last gave per pending workload. */
  readonly reasons = new Map<number, PendingReason["reason"]>();

  record = (event: DomainEvent): void => {
    if (event.kind === "WorkloadSubmitted") this.submitted.set(event.workload.id, { t: event.t, type: event.workload.type });
    else if (event.kind === "WorkloadUnschedulable") {
      const first = event.reasons[0];
      if (first !== undefined) this.reasons.set(event.workload.id, first.reason);
    } else if (event.kind === "WorkloadStarted") {
      this.reasons.delete(event.workload.id);
      const submitted = this.submitted.get(event.workload.id);
      if (submitted !== undefined) {
        this.waits.push({ type: submitted.type, waitedMs: event.t - submitted.t, started: true });
        this.submitted.delete(event.workload.id);
      }
    } else if (event.kind === "WorkloadCancelled" || event.kind === "WorkloadFailed") {
      this.reasons.delete(event.workload.id);
      this.submitted.delete(event.workload.id);
    }
  };

  finish(endMs: number): Wait[] {
    for (const { t, type } of this.submitted.values()) this.waits.push({ type, waitedMs: endMs - t, started: false });
    return this.waits;
  }
}

/** GPUs held per node pool and per project at each sample. */
class AllocationRecorder {
  readonly pools: Array<ChartSeries & { readonly capacity: number }>;
  readonly projects: Array<ChartSeries & { readonly quota: number }>;
  private readonly projectIndex: Map<string, number>;

  constructor(blueprint: Blueprint) {
    this.pools = blueprint.nodePools.map((p) => ({ name: p.name, capacity: p.nodes * p.gpusPerNode, values: [] }));
    this.projects = blueprint.projects.map((p) => ({
      name: p.name,
      quota: Object.values(p.nodePools).reduce((sum, q) => sum + q.deserved, 0),
      values: [],
    }));
    this.projectIndex = new Map(this.projects.map((p, i) => [p.name, i]));
  }

  sample(view: ClusterView): void {
    const held = new Array<number>(this.projects.length).fill(0);
    view.pools.forEach((pool, p) => {
      let poolHeld = 0;
      for (const node of pool.nodes)
        for (const gpu of node.gpus) {
          if (gpu.holder === null) continue;
          poolHeld++;
          const project = this.projectIndex.get(gpu.holder.workload.project);
          if (project !== undefined) held[project] = (held[project] ?? 0) + 1;
        }
      this.pools[p]?.values.push(poolHeld);
    });
    this.projects.forEach((project, i) => {
      project.values.push(held[i] ?? 0);
    });
  }
}

/**
 * Each heatmap row's mean utilisation (the GPU activity model dcgm-exporter reads), and, when
 * rows are single GPUs, each pod's stay on its GPU as a bar.
 */
class GpuRecorder {
  readonly gpusPerRow: number;
  readonly rows: GpuRow[] = [];
  readonly occupancy: Occupancy[] = [];
  /** The open bar on each single-GPU row. */
  private readonly open = new Map<number, { from: number; workload: string; project: string; key: string }>();

  constructor(
    view: ClusterView,
    private readonly activity: GpuActivityModel,
  ) {
    const gpus = view.pools.flatMap((pool) =>
      pool.nodes.flatMap((node) => node.gpus.map((gpu) => ({ node: node.name, index: gpu.index }))),
    );
    this.gpusPerRow = Math.ceil(gpus.length / MAX_GPU_ROWS);
    for (let i = 0; i < gpus.length; i += this.gpusPerRow) {
      const span = gpus.slice(i, i + this.gpusPerRow);
      const [a, b] = [span[0], span.at(-1)] as [(typeof span)[number], (typeof span)[number]];
      const label = this.gpusPerRow === 1 ? `${a.node} GPU ${a.index}` : a.node === b.node ? a.node : `${a.node} … ${b.node}`;
      this.rows.push({ label, utilisation: [] });
    }
  }

  sample(view: ClusterView, t: number): void {
    const sums = new Array<number>(this.rows.length).fill(0);
    const counts = new Array<number>(this.rows.length).fill(0);
    let index = 0;
    for (const pool of view.pools)
      for (const node of pool.nodes)
        for (const gpu of node.gpus) {
          const row = Math.floor(index++ / this.gpusPerRow);
          if (node.status !== "rebooting" && gpu.health === "ok") {
            sums[row] = (sums[row] ?? 0) + this.activity.read(gpu, pool.model, view.now).gpuUtil;
            counts[row] = (counts[row] ?? 0) + 1;
          }
          if (this.gpusPerRow === 1) this.track(row, gpu.holder, t);
        }
    this.rows.forEach((row, i) => {
      row.utilisation.push(counts[i] ? Math.round((sums[i] as number) / (counts[i] as number)) : null);
    });
  }

  private track(row: number, holder: DeepReadonly<Gpu>["holder"], t: number): void {
    const key = holder === null ? "" : `${holder.workload.id}/${holder.name}`;
    const bar = this.open.get(row);
    if (bar !== undefined && bar.key !== key) {
      this.occupancy.push({ row, from: bar.from, to: t, workload: bar.workload, project: bar.project });
      this.open.delete(row);
    }
    if (holder !== null && !this.open.has(row))
      this.open.set(row, { from: t, workload: holder.workload.name, project: holder.workload.project, key });
  }

  finish(endMs: number): void {
    for (const [row, bar] of this.open)
      this.occupancy.push({ row, from: bar.from, to: endMs, workload: bar.workload, project: bar.project });
  }
}

/** Each node's state at each sample (an index into NODE_STATES, the worst that holds). */
function nodeState(node: DeepReadonly<Node>, t: number): number {
  if (node.status === "rebooting") return NODE_STATES.indexOf("NotReady (rebooting)");
  if (node.status === "cordoned") return NODE_STATES.indexOf("cordoned");
  if (node.memoryPressureUntil !== null && node.memoryPressureUntil > t) return NODE_STATES.indexOf("MemoryPressure");
  return NODE_STATES.indexOf("Ready");
}

/** Pods waiting at each sample, per project and per the reason the scheduler last gave. */
class BacklogRecorder {
  readonly perProject: ChartSeries[];
  readonly perReason: ChartSeries[] = WAIT_REASONS.map((name) => ({ name, values: [] }));

  constructor(
    blueprint: Blueprint,
    private readonly waits: WaitRecorder,
  ) {
    this.perProject = blueprint.projects.map((p) => ({ name: p.name, values: [] }));
  }

  sample(view: ClusterView): void {
    const waiting = new Map<string, number>();
    const reasons = new Array<number>(WAIT_REASONS.length).fill(0);
    for (const w of view.pending) {
      waiting.set(w.project, (waiting.get(w.project) ?? 0) + w.pendingPods.length);
      const reason = WAIT_REASONS.indexOf(this.waits.reasons.get(w.id) ?? "NotYetAttempted");
      reasons[reason] = (reasons[reason] ?? 0) + w.pendingPods.length;
    }
    for (const series of this.perProject) series.values.push(waiting.get(series.name) ?? 0);
    this.perReason.forEach((series, i) => {
      series.values.push(reasons[i] ?? 0);
    });
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
  const waits = new WaitRecorder();
  const observe = (event: DomainEvent) => {
    summary.record(event);
    waits.record(event);
    const moment = momentOf(event);
    if (moment !== undefined) moments.push(moment);
  };
  const run = new ClusterRun(blueprint, { ...(seed === undefined ? {} : { seed }), metrics: false, readsGpus: true, observers: [observe] });
  const allocation = new AllocationRecorder(blueprint);
  const start = run.simulation.view();
  const gpus = new GpuRecorder(start, run.metrics.activity);
  const backlog = new BacklogRecorder(blueprint, waits);
  const nodes: NodeRow[] = start.pools.flatMap((pool) => pool.nodes.map((node) => ({ name: node.name, states: [] })));

  const stepMs = Math.max(60_000, Math.ceil(durationMs / MAX_SAMPLES / 60_000) * 60_000);
  const times: number[] = [];
  drive(run, every(stepMs, { toMs: durationMs, atStart: true, atEnd: true }), ({ simulatedMs: t, view }) => {
    onProgress?.(t);
    times.push(t);
    allocation.sample(view);
    gpus.sample(view, t);
    backlog.sample(view);
    let n = 0;
    for (const pool of view.pools) for (const node of pool.nodes) nodes[n++]?.states.push(nodeState(node, t));
  });
  gpus.finish(durationMs);
  return {
    cluster: blueprint.cluster.name,
    startUnixMs: blueprint.time.start,
    durationMs,
    seed: seed ?? blueprint.seed,
    times,
    allocation: allocation.pools,
    projectAllocation: allocation.projects,
    backlog: backlog.perProject,
    backlogByReason: backlog.perReason,
    gpusPerRow: gpus.gpusPerRow,
    gpuRows: gpus.rows,
    occupancy: gpus.occupancy,
    nodes,
    moments,
    waits: waits.finish(durationMs),
    summary: summary.summary(durationMs),
  };
}
