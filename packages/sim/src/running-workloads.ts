/**
 * The workloads holding GPUs, kept as they start and stop in the shapes the scheduler's reclaim
 * and preempt actions read every cycle: the preemptible ones by node pool, and by project within
 * a pool in victim order. Rebuilding those from the whole running set each cycle cost more than
 * the rest of a cycle on a 4,096-GPU cluster with a few hundred workloads running.
 */
import type { Workload } from "./world.js";

export class RunningWorkloads implements Iterable<Workload> {
  /** In start order: what iteration gives (pods on a node, in the order they started). */
  private readonly all = new Set<Workload>();
  private readonly preemptibleByPool = new Map<string, Set<Workload>>();
  /** Pool → project → preemptible workloads in victim order. */
  private readonly byProject = new Map<string, Map<string, Workload[]>>();
  /** Pool → how many times what reclaim and preempt read of its running workloads has changed. */
  private readonly versions = new Map<string, number>();

  get size(): number {
    return this.all.size;
  }

  [Symbol.iterator](): Iterator<Workload> {
    return this.all.values();
  }

  /**
   * Counts the changes to a pool's running workloads that reclaim and preempt read (which run
   * there, their victim order, which are terminating): a failed attempt fails again while it
   * holds, with the pool's free GPUs and its queues' figures.
   */
  versionIn(pool: string): number {
    return this.versions.get(pool) ?? 0;
  }

  /** A workload that just started: its pool, priority and runningSince are set. */
  add(w: Workload): void {
    this.all.add(w);
    if (w.pool !== null) this.moved(w.pool);
    if (!w.preemptible || w.pool === null) return;
    let inPool = this.preemptibleByPool.get(w.pool);
    if (inPool === undefined) {
      inPool = new Set();
      this.preemptibleByPool.set(w.pool, inPool);
    }
    inPool.add(w);
    this.file(w, w.pool);
  }

  /** A workload that stopped running; `pool` is where it ran (the workload may have forgotten it). */
  delete(w: Workload, pool: string): void {
    if (!this.all.delete(w)) return;
    this.moved(pool);
    if (!w.preemptible) return;
    this.preemptibleByPool.get(pool)?.delete(w);
    this.unfile(w, pool);
  }

  /** A running workload whose victim order changed (a container restart resets runningSince). */
  reordered(w: Workload): void {
    if (!w.preemptible || w.pool === null || !this.all.has(w)) return;
    this.moved(w.pool);
    this.unfile(w, w.pool);
    this.file(w, w.pool);
  }

  /** A running workload evicted: it holds its GPUs until it has terminated, and is no victim meanwhile. */
  terminating(w: Workload): void {
    if (w.pool !== null) this.moved(w.pool);
  }

  private moved(pool: string): void {
    this.versions.set(pool, (this.versions.get(pool) ?? 0) + 1);
  }

  /** The preemptible workloads running in a pool, in no particular order. */
  preemptibleIn(pool: string): Iterable<Workload> {
    return this.preemptibleByPool.get(pool) ?? [];
  }

  /** One project's preemptible workloads in a pool, lowest priority and most recently started first. */
  preemptibleOf(pool: string, project: string): readonly Workload[] {
    return this.byProject.get(pool)?.get(project) ?? [];
  }

  private file(w: Workload, pool: string): void {
    let projects = this.byProject.get(pool);
    if (projects === undefined) {
      projects = new Map();
      this.byProject.set(pool, projects);
    }
    const list = projects.get(w.project);
    if (list === undefined) {
      projects.set(w.project, [w]);
      return;
    }
    // Binary search for the first workload that comes after w.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (victimOrder(list[mid] as Workload, w) < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, w);
  }

  private unfile(w: Workload, pool: string): void {
    const list = this.byProject.get(pool)?.get(w.project);
    const at = list?.indexOf(w) ?? -1;
    if (at >= 0) list?.splice(at, 1);
  }
}

/** Victims: lowest priority first, then the most recently started. */
export function victimOrder(a: Workload, b: Workload): number {
  return a.priority - b.priority || (b.runningSince ?? 0) - (a.runningSince ?? 0) || b.id - a.id;
}
