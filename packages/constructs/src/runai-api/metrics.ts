/**
 * The metric types gpusynth computes for each Metrics API scope, from the snapshot history.
 * One entry per served type; a type of the spec's enum that is not here is not emulated
 * (signals/runai-api.md says why: CPU usage is not simulated, or the vendor states no unit).
 * Units follow the documented Prometheus family the vendor maps the type to ("Changed metrics
 * and API mapping", Run:ai 2.17 docs: e.g. runai_gpu_utilization_per_workload, 0 to 100 →
 * workload GPU_UTILIZATION), or the unit the type's name states (_BYTES). Aggregates are
 * computed exactly as the Run:ai families are, so the API and the Prometheus series agree.
 */

import type { PodRecord, WorkloadRecord } from "@gpusynth/sim";
import type { ClusterIndex, OrgUnit } from "./cluster-index.js";
import { FREE, NOT_REPORTING, type Snapshot, workloadRow } from "./history.js";

const MIB = 2 ** 20;

/** One measurement: optional labels and its value in a snapshot (undefined: no data then). */
export interface MeasuredSeries {
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: (snapshot: Snapshot) => number | undefined;
}

type Build<Scope> = (index: ClusterIndex, scope: Scope) => MeasuredSeries[];

/** Mean utilisation of the reporting GPUs among `gpus`, to two decimals (as runai_gpu_utilization_per_node). */
function meanUtil(snapshot: Snapshot, gpus: readonly number[], holderOf?: (holder: number) => boolean): number | undefined {
  let sum = 0;
  let n = 0;
  for (const g of gpus) {
    const holder = snapshot.holder[g] as number;
    if (holder === NOT_REPORTING || (holderOf !== undefined && !holderOf(holder))) continue;
    sum += snapshot.util[g] as number;
    n++;
  }
  return n === 0 ? undefined : Math.round((sum / n) * 100) / 100;
}

function count(snapshot: Snapshot, gpus: readonly number[], test: (holder: number) => boolean): number {
  let n = 0;
  for (const g of gpus) if (test(snapshot.holder[g] as number)) n++;
  return n;
}

function memBytes(snapshot: Snapshot, gpus: readonly number[], holderOf: (holder: number) => boolean): number | undefined {
  let sum = 0;
  let any = false;
  for (const g of gpus) {
    if (!holderOf(snapshot.holder[g] as number)) continue;
    sum += snapshot.memUsedMiB[g] as number;
    any = true;
  }
  return any ? sum * MIB : undefined;
}

const reporting = (holder: number) => holder !== NOT_REPORTING;
const allocated = (holder: number) => holder >= 0;

/** Cluster and node-pool scope: every GPU, or one pool's. */
export interface ClusterScope {
  readonly gpus: readonly number[];
  readonly nodes: readonly number[];
  /** Project queues in scope (positions in the view's queue list). */
  readonly projectQueues: readonly number[];
  /** Positions of the node pools in scope. */
  readonly pools: ReadonlySet<number>;
}

export const CLUSTER_METRICS: Readonly<Record<string, Build<ClusterScope>>> = {
  TOTAL_GPU_NODES: (_i, s) => [{ value: () => s.nodes.length }],
  TOTAL_GPU: (_i, s) => [{ value: () => s.gpus.length }],
  ALLOCATED_GPU: (_i, s) => [{ value: (snap) => count(snap, s.gpus, allocated) }],
  UNALLOCATED_GPU: (_i, s) => [{ value: (snap) => s.gpus.length - count(snap, s.gpus, allocated) }],
  GPU_UTILIZATION: (_i, s) => [{ value: (snap) => meanUtil(snap, s.gpus) }],
  GPU_QUOTA: (i, s) => [{ value: () => s.projectQueues.reduce((sum, q) => sum + (i.queues[q]?.deserved ?? 0), 0) }],
  WORKLOADS_COUNT: (_i, s) => [
    {
      value: (snap) => {
        // Workloads in scope: running in one of its pools, or pending for one first.
        let n = 0;
        for (const pool of snap.workloads.pool) if (s.pools.has(pool)) n++;
        return n;
      },
    },
  ],
};

export const NODE_METRICS: Readonly<Record<string, Build<number>>> = {
  GPU_UTILIZATION_PER_GPU: (i, node) =>
    perGpu(i, node, (snap, g) => (reporting(snap.holder[g] as number) ? (snap.util[g] as number) : undefined)),
  GPU_UTILIZATION: (i, node) => [{ value: (snap) => meanUtil(snap, gpusOf(i, node)) }],
  GPU_MEMORY_USAGE_BYTES_PER_GPU: (i, node) =>
    perGpu(i, node, (snap, g) => (reporting(snap.holder[g] as number) ? (snap.memUsedMiB[g] as number) * MIB : undefined)),
  GPU_MEMORY_USAGE_BYTES: (i, node) => [{ value: (snap) => memBytes(snap, gpusOf(i, node), reporting) }],
  GPU_ALLOCATION_PER_GPU: (i, node) =>
    perGpu(i, node, (snap, g) => {
      const holder = snap.holder[g] as number;
      return holder === NOT_REPORTING ? undefined : holder === FREE ? 0 : 1;
    }),
  // Whole GPUs only (no fractions are simulated): an allocated GPU's memory is all of it.
  GPU_MEMORY_ALLOCATION_BYTES_PER_GPU: (i, node) => {
    const total = (i.nodes[node]?.pool.model.framebufferMiB ?? 0) * MIB;
    return perGpu(i, node, (snap, g) => {
      const holder = snap.holder[g] as number;
      return holder === NOT_REPORTING ? undefined : holder === FREE ? 0 : total;
    });
  },
};

/** A workload's or pod's GPUs in a snapshot: those its pods hold. */
function heldBy(serials: ReadonlySet<number>) {
  return (holder: number) => serials.has(holder);
}

const podSerials = (w: WorkloadRecord) => new Set(w.pods.map((p) => p.serial));

export const WORKLOAD_METRICS: Readonly<Record<string, Build<WorkloadRecord>>> = {
  GPU_ALLOCATION: (i, w) => {
    const held = heldBy(podSerials(w));
    return [{ value: (snap) => (workloadRow(snap.workloads, w.ref.id) < 0 ? undefined : count(snap, i.allGpus, held)) }];
  },
  GPU_UTILIZATION: (i, w) => {
    const held = heldBy(podSerials(w));
    return [{ value: (snap) => meanUtil(snap, i.allGpus, held) }];
  },
  GPU_MEMORY_USAGE_BYTES: (i, w) => {
    const held = heldBy(podSerials(w));
    return [{ value: (snap) => memBytes(snap, i.allGpus, held) }];
  },
  POD_COUNT: (_i, w) => [{ value: (snap) => column(snap, w, "pods") }],
  RUNNING_POD_COUNT: (_i, w) => [{ value: (snap) => column(snap, w, "runningPods") }],
};

function column(snap: Snapshot, w: WorkloadRecord, name: "pods" | "runningPods"): number | undefined {
  const row = workloadRow(snap.workloads, w.ref.id);
  return row < 0 ? undefined : (snap.workloads[name][row] as number);
}

export const POD_METRICS: Readonly<Record<string, Build<PodRecord>>> = {
  GPU_UTILIZATION_PER_GPU: (i, pod) =>
    podGpus(i, pod).map(([g, index]) => ({
      labels: { gpu: String(index) },
      value: (snap) => (snap.holder[g] === pod.serial ? (snap.util[g] as number) : undefined),
    })),
  GPU_UTILIZATION: (i, pod) => [{ value: (snap) => meanUtil(snap, i.allGpus, (h) => h === pod.serial) }],
  GPU_MEMORY_USAGE_BYTES_PER_GPU: (i, pod) =>
    podGpus(i, pod).map(([g, index]) => ({
      labels: { gpu: String(index) },
      value: (snap) => (snap.holder[g] === pod.serial ? (snap.memUsedMiB[g] as number) * MIB : undefined),
    })),
  GPU_MEMORY_USAGE_BYTES: (i, pod) => [{ value: (snap) => memBytes(snap, i.allGpus, (h) => h === pod.serial) }],
};

/** Project and department scope: the unit's queues, in every pool or one. */
export interface OrgScope {
  readonly unit: OrgUnit;
  readonly pool?: string;
}

function unitQueues(i: ClusterIndex, s: OrgScope): number[] {
  return s.unit.queues.filter((q) => s.pool === undefined || i.queues[q]?.pool === s.pool);
}

export const ORG_UNIT_METRICS: Readonly<Record<string, Build<OrgScope>>> = {
  GPU_QUOTA: (i, s) => {
    const queues = unitQueues(i, s);
    return [{ value: () => queues.reduce((sum, q) => sum + (i.queues[q]?.deserved ?? 0), 0) }];
  },
  GPU_ALLOCATION: (i, s) => {
    const queues = unitQueues(i, s);
    return [{ value: (snap) => queues.reduce((sum, q) => sum + (snap.queueAllocated[q] as number), 0) }];
  },
};

function gpusOf(i: ClusterIndex, node: number): readonly number[] {
  return i.nodes[node]?.gpus ?? [];
}

function perGpu(i: ClusterIndex, node: number, value: (snap: Snapshot, g: number) => number | undefined): MeasuredSeries[] {
  return gpusOf(i, node).map((g) => ({ labels: { gpu: String(i.gpus[g]?.index) }, value: (snap) => value(snap, g) }));
}

/** The GPUs a pod was placed on: [position in the index, GPU index on its node]. */
function podGpus(i: ClusterIndex, pod: PodRecord): Array<[number, number]> {
  const slot = pod.node === null ? undefined : i.nodeByName(pod.node);
  if (slot === undefined) return [];
  return pod.gpus.map((gpu) => [slot.gpus[gpu.index] as number, gpu.index]);
}
