/**
 * The workloads waiting to be scheduled, kept in two orders as they come and go: arrival order
 * (what the cluster view lists) and KAI's job order (what every scheduling cycle walks), so a
 * cycle does not sort the whole backlog again.
 */
import type { Workload } from "./world.js";

export class PendingWorkloads implements Iterable<Workload> {
  private readonly arrived = new Set<Workload>();
  private readonly ordered: Workload[] = [];

  get size(): number {
    return this.arrived.size;
  }

  /** In the order they became pending. */
  [Symbol.iterator](): Iterator<Workload> {
    return this.arrived.values();
  }

  add(w: Workload): void {
    if (this.arrived.has(w)) return;
    this.arrived.add(w);
    let lo = 0;
    let hi = this.ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (jobOrder(this.ordered[mid] as Workload, w) < 0) lo = mid + 1;
      else hi = mid;
    }
    this.ordered.splice(lo, 0, w);
  }

  delete(w: Workload): void {
    if (!this.arrived.delete(w)) return;
    this.ordered.splice(this.ordered.indexOf(w), 1);
  }

  /** In job order: a snapshot, unchanged by later adds and deletes. */
  inJobOrder(): Workload[] {
    return [...this.ordered];
  }
}

/** KAI's job order within a queue: higher priority first, then the older. */
export function jobOrder(a: Workload, b: Workload): number {
  return b.priority - a.priority || a.submittedAt - b.submittedAt || a.id - b.id;
}
