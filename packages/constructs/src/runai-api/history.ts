/**
 * What the control plane's metrics store keeps: one compact snapshot of the cluster per step,
 * in a ring of bounded length, so a metrics query over any time range in the retention can be
 * answered from the simulation's own past. Snapshots hold typed arrays indexed by a fixed GPU
 * order (pool, node, GPU), so a 4,096-GPU cluster costs about 10 bytes per GPU per snapshot.
 */

/** A GPU's holder in a snapshot: a pod serial (≥ 0), or one of these. */
export const FREE = -1;
/** The GPU reports nothing: off the bus, resetting, or its node is rebooting. */
export const NOT_REPORTING = -2;

/** The workloads that exist (pending or running), as columns sorted by the simulation's workload id. */
export interface WorkloadColumns {
  readonly ids: Int32Array;
  /** 1 while running, 0 while pending. */
  readonly running: Uint8Array;
  /** Position of its node pool: where it runs, or the first it asked for while pending. */
  readonly pool: Int16Array;
  /** Pods that exist (pending or running). */
  readonly pods: Uint16Array;
  readonly runningPods: Uint16Array;
}

/** The row of workload `id` in the columns, or -1. */
export function workloadRow(columns: WorkloadColumns, id: number): number {
  let lo = 0;
  let hi = columns.ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = columns.ids[mid] as number;
    if (v === id) return mid;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export interface Snapshot {
  /** Unix ms stamped on the snapshot (simulated time offline, wall-clock time live). */
  readonly t: number;
  /** Per GPU, 0–100 (DCGM_FI_DEV_GPU_UTIL's scale). */
  readonly util: Uint8Array;
  readonly memUsedMiB: Uint32Array;
  /** Per GPU: the holding pod's serial, FREE or NOT_REPORTING. */
  readonly holder: Int32Array;
  /** Per scheduling queue (the simulation's queue order): allocated GPUs. */
  readonly queueAllocated: Float64Array;
  readonly queueAllocatedNonPreemptible: Float64Array;
  readonly workloads: WorkloadColumns;
}

export class SnapshotHistory {
  private readonly ring: (Snapshot | undefined)[];
  private next = 0;
  private size = 0;

  /**
   * @param capacity snapshots kept (the oldest is dropped first)
   * @param stepMs least time between two kept snapshots
   */
  constructor(
    readonly capacity: number,
    readonly stepMs: number,
  ) {
    this.ring = new Array(capacity);
  }

  /** Keeps the snapshot when a step has passed since the last one kept. */
  offer(snapshot: Snapshot): void {
    const last = this.newest();
    if (last !== undefined && snapshot.t < last.t + this.stepMs) return;
    this.ring[this.next] = snapshot;
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.size + 1, this.capacity);
  }

  newest(): Snapshot | undefined {
    return this.size === 0 ? undefined : this.ring[(this.next - 1 + this.capacity) % this.capacity];
  }

  oldest(): Snapshot | undefined {
    return this.size === 0 ? undefined : this.ring[(this.next - this.size + this.capacity) % this.capacity];
  }

  private get(i: number): Snapshot {
    return this.ring[(this.next - this.size + i + this.capacity) % this.capacity] as Snapshot;
  }

  /** The latest snapshot at or before t and no older than t − lookbackMs (Prometheus' instant-vector rule). */
  at(t: number, lookbackMs: number): Snapshot | undefined {
    let lo = 0;
    let hi = this.size - 1;
    let found: Snapshot | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.get(mid);
      if (s.t <= t) {
        found = s;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found !== undefined && found.t >= t - lookbackMs ? found : undefined;
  }
}
