/**
 * One scheduling cycle with Run:ai semantics, following the open-source Run:ai scheduler,
 * KAI-Scheduler (NVIDIA/KAI-Scheduler @72de64fc8eca), as the behavioural reference. Paths
 * below are relative to its pkg/scheduler/. docs/scheduling.md lists what is simplified.
 *
 * Actions run in KAI's default order (conf_util/scheduler_conf_util.go): allocate, then
 * consolidation, then reclaim, then preempt. Consolidation is attempted and logged but moves no
 * running job; stale-gang eviction, the last action, is the simulation's (staleGangsDue).
 */
import { type PodShape, podShape } from "@gpusynth/blueprint";
import { type AttemptOutcome, type PendingReason, type QueueDivision, queueState } from "./domain-events.js";
import { divideFairShare } from "./fair-share.js";
import { MinHeap } from "./min-heap.js";
import { type RunningWorkloads, victimOrder } from "./running-workloads.js";
import {
  type Gpu,
  isAllocatable,
  type Node,
  type NodeResources,
  nodeResources,
  type Pod,
  type Pool,
  type Queue,
  schedulableFreeGpus,
  type Workload,
} from "./world.js";

export interface PodAssignment {
  readonly node: Node;
  readonly gpus: readonly Gpu[];
}

export interface SchedulerActions {
  bind(workload: Workload, pool: Pool, pods: readonly PodAssignment[]): void;
  evict(victim: Workload, action: "reclaim" | "preempt", preemptor: Workload): void;
  /** The preemptor waits, pipelined onto its victims' GPUs, until they have terminated. */
  pipeline(workload: Workload, pool: Pool, pods: readonly PodAssignment[]): void;
  unschedulable(workload: Workload, reasons: readonly PendingReason[]): void;
  /** What the cycle tried, in order, for the scheduler's own log. */
  traced(trace: CycleTrace): void;
}

/** One attempt of an action for one workload, as the scheduler would log it. */
export interface CycleAttempt {
  readonly workload: Workload;
  /** The project queue and node pool of the attempt. */
  readonly queue: Queue;
  readonly outcome: AttemptOutcome;
  /** Workloads evicted to make room (reclaim, preempt), with the pods they had. */
  readonly victims: ReadonlyArray<{ readonly workload: Workload; readonly pods: readonly Pod[] }>;
  /** A skipped attempt: the job of the same scheduling signature that already failed and is no harder. */
  readonly notEasierThan?: Workload;
}

export interface CycleTrace {
  readonly pendingJobs: number;
  /** All queues, departments and projects (the session line counts them all). */
  readonly queues: number;
  /** Queues without children: the projects' (what each action counts). */
  readonly leafQueues: number;
  readonly nodes: number;
  /** Nodes not Ready: the proportion plugin leaves their resources out. */
  readonly notReadyNodes: readonly string[];
  /** Nodes whose allocatable GPUs fall short of their capacity. */
  readonly gpuShortNodes: readonly NodeResources[];
  /** Allocatable resources of the Ready nodes, as the proportion plugin totals them. */
  readonly allocatable: { readonly cpuMilli: number; readonly memoryBytes: number; readonly gpus: number };
  readonly allocate: readonly CycleAttempt[];
  readonly consolidation: readonly CycleAttempt[];
  readonly reclaim: readonly CycleAttempt[];
  readonly preempt: readonly CycleAttempt[];
  readonly division: readonly QueueDivision[];
  readonly divisionAfter: readonly QueueDivision[];
}

type ClusterFacts = Pick<CycleTrace, "queues" | "leafQueues" | "nodes" | "notReadyNodes" | "gpuShortNodes" | "allocatable">;

interface QueueTree {
  readonly all: readonly Queue[];
  readonly tops: readonly Queue[];
  readonly children: ReadonlyMap<Queue, readonly Queue[]>;
}

export class Scheduler {
  private readonly pools: ReadonlyMap<string, Pool>;
  /** Project queues by project, then pool. */
  private readonly queues: ReadonlyMap<string, ReadonlyMap<string, Queue>>;

  constructor(
    pools: readonly Pool[],
    private readonly allQueues: readonly Queue[],
    private readonly actions: SchedulerActions,
  ) {
    this.pools = new Map(pools.map((pool) => [pool.name, pool]));
    const queues = new Map<string, Map<string, Queue>>();
    for (const q of allQueues) {
      if (q.level !== "project") continue;
      const byPool = queues.get(q.name) ?? new Map<string, Queue>();
      byPool.set(q.pool, q);
      queues.set(q.name, byPool);
    }
    this.queues = queues;
    this.leafQueues = allQueues.filter((q) => !allQueues.some((child) => child.parent === q)).length;
    this.figuresBefore = new Float64Array(4 * allQueues.length);
    this.pendingDemand = new Float64Array(3 * allQueues.length);
    // updateFairShares finds a queue's slot by its declaration order.
    allQueues.forEach((q, i) => {
      if (q.order !== i) throw new Error(`queue ${q.name}/${q.pool} is declared ${q.order}th but listed ${i}th`);
    });
  }

  private readonly leafQueues: number;

  /** The project queue of a workload in a pool (validation guarantees it exists). */
  queueOf(workload: Workload, pool: string): Queue {
    const queue = this.queues.get(workload.project)?.get(pool);
    if (queue === undefined) throw new Error(`no queue for project ${workload.project} in node pool ${pool}`);
    return queue;
  }

  /**
   * The project queue of the pool a workload prefers: the first it asks for (validation guarantees
   * one), where its demand counts. Looked up once per workload: every cycle asks it of every
   * pending job several times.
   */
  preferredQueue(workload: Workload): Queue {
    let queue = this.preferred.get(workload);
    if (queue === undefined) {
      queue = this.queueOf(workload, preferredPool(workload));
      this.preferred.set(workload, queue);
    }
    return queue;
  }
  private readonly preferred = new WeakMap<Workload, Queue>();

  private pool(name: string): Pool {
    const pool = this.pools.get(name);
    if (pool === undefined) throw new Error(`no node pool ${name}`);
    return pool;
  }

  /**
   * Runs allocate, consolidation, reclaim and preempt over the pending workloads, given in job
   * order (PendingWorkloads keeps them so). `running` holds the workloads with GPUs; both are
   * read, never changed here (the actions do that). Victims are chosen among the workloads that
   * were running when the cycle began.
   */
  cycle(waiting: readonly Workload[], running: RunningWorkloads): void {
    // A pipelined job waits for its victims: allocate fits it onto their releasing GPUs again and
    // pipelines it each cycle (allocate.go:94), so no later action tries it (traced first here:
    // gpusynth does not place it among the others in the queue order).
    const pending = waiting.filter((w) => w.pipelinedUntil === null);
    this.updateFairShares(pending);
    const division = this.division();
    this.trace = { allocate: [], consolidation: [], reclaim: [], preempt: [] };
    for (const w of waiting)
      if (w.pipelinedUntil !== null)
        this.trace.allocate.push({ workload: w, queue: this.preferredQueue(w), outcome: "pipelined", victims: [] });
    this.startedThisCycle.clear();
    this.fitting.clear();
    const reasons = new Map<Workload, PendingReason[]>();
    const stillPending = this.allocate(pending, reasons);
    this.consolidate(stillPending);
    const reclaimFailed = new SignatureSkips();
    const afterReclaim = stillPending.filter((w) => !this.reclaimFor(w, running, reasons, reclaimFailed));
    const preemptFailed = new SignatureSkips();
    const afterPreempt = afterReclaim.filter((w) => !this.preemptFor(w, running, reasons, preemptFailed));
    for (const workload of afterPreempt) this.actions.unschedulable(workload, reasons.get(workload) ?? []);
    // What the next session opens with when nothing else changes: after this cycle's binds and
    // pipelinings (the scheduler's idle cycles repeat it).
    const acted = [this.trace.allocate, this.trace.reclaim, this.trace.preempt].some((list) =>
      list.some((a) => a.victims.length > 0 || a.outcome === "allocated"),
    );
    let divisionAfter = division;
    if (acted) {
      this.updateFairShares(waiting.filter((w) => w.phase === "Pending" && w.pipelinedUntil === null));
      divisionAfter = this.division();
    }
    this.actions.traced({ pendingJobs: waiting.length, ...this.clusterFacts(), ...this.trace, division, divisionAfter });
  }

  /**
   * What the session and the proportion plugin report of the cluster each cycle: counted again
   * only when a node's status or a GPU's health changed (a pool's capacity version moved).
   */
  private clusterFacts(): ClusterFacts {
    let version = 0;
    for (const pool of this.pools.values()) version += pool.capacityVersion;
    if (this.facts?.version !== version) this.facts = { version, facts: this.countClusterFacts() };
    return this.facts.facts;
  }
  private facts: { readonly version: number; readonly facts: ClusterFacts } | undefined;

  private countClusterFacts(): ClusterFacts {
    let nodes = 0;
    let cpuMilli = 0;
    let memoryBytes = 0;
    let gpus = 0;
    const notReadyNodes: string[] = [];
    const gpuShortNodes: NodeResources[] = [];
    for (const pool of this.pools.values()) {
      nodes += pool.nodes.length;
      gpus += this.capacityOf(pool);
      for (const node of pool.nodes) {
        const status = nodeResources(node);
        if (status.capacity.gpus !== status.allocatable.gpus) gpuShortNodes.push(status);
        if (node.status !== "ready") notReadyNodes.push(node.name);
        else {
          // The node's allocatable, as KAI reads it.
          cpuMilli += status.allocatable.cpuMilli;
          memoryBytes += status.allocatable.memoryBytes;
        }
      }
    }
    return {
      queues: this.allQueues.length,
      leafQueues: this.leafQueues,
      nodes,
      notReadyNodes,
      gpuShortNodes,
      allocatable: { cpuMilli, memoryBytes, gpus },
    };
  }

  /**
   * actions/consolidation: for each preemptible job still pending, KAI tries to move running
   * jobs so that it fits. gpusynth does not move running jobs (docs/scheduling.md), so every
   * attempt fails: for want of idle GPUs in the pool, or for want of a strategy. Jobs no easier
   * than one of the same signature that failed are skipped, as KAI's scheduling signatures do.
   */
  private consolidate(stillPending: readonly Workload[]): void {
    const failed = new SignatureSkips();
    for (const w of stillPending) {
      if (!w.preemptible) continue;
      const poolName = preferredPool(w);
      const queue = this.queueOf(w, poolName);
      const harder = failed.notEasierThan(w, poolName);
      if (harder !== undefined) {
        this.trace.consolidation.push({ workload: w, queue, outcome: "skipped", victims: [], notEasierThan: harder });
        continue;
      }
      const idle = this.pool(poolName).schedulableFree;
      this.trace.consolidation.push({ workload: w, queue, outcome: idle < w.gpus ? "not-enough-gpus" : "no-strategy", victims: [] });
      failed.record(w, poolName);
    }
  }

  /** Workloads this cycle bound: not victims before the next cycle. */
  private readonly startedThisCycle = new Set<Workload>();

  private bind(w: Workload, pool: Pool, pods: readonly PodAssignment[]): void {
    this.startedThisCycle.add(w);
    this.fitting.clear();
    this.actions.bind(w, pool, pods);
  }

  /** Victims' GPUs are still held while they terminate: the preemptor is pipelined onto them (binds at once when none were needed). */
  private pipelineOrBind(w: Workload, pool: Pool, chosen: { victims: readonly Workload[]; pods: readonly PodAssignment[] }): void {
    if (chosen.victims.length === 0) this.bind(w, pool, chosen.pods);
    else this.actions.pipeline(w, pool, chosen.pods);
  }

  /** A victim candidate: running since before this cycle, in the pool asked for, not already terminating. */
  private isVictimIn(v: Workload, pool: string): boolean {
    return v.pool === pool && v.phase === "Running" && v.terminatingUntil === null && !this.startedThisCycle.has(v);
  }

  private trace: { allocate: CycleAttempt[]; consolidation: CycleAttempt[]; reclaim: CycleAttempt[]; preempt: CycleAttempt[] } = {
    allocate: [],
    consolidation: [],
    reclaim: [],
    preempt: [],
  };

  /** plugins/proportion: fair share per queue, department level first, then projects. */
  private updateFairShares(pending: readonly Workload[]): void {
    // What each project queue's pending workloads ask for: GPUs, CPU millicores, memory bytes,
    // at 3 × the queue's index (its declaration order).
    const demand = this.pendingDemand;
    demand.fill(0);
    for (const w of pending) {
      // A pending workload's demand is counted in its preferred node pool only.
      const at = 3 * this.preferredQueue(w).order;
      demand[at] = (demand[at] ?? 0) + w.gpus;
      demand[at + 1] = (demand[at + 1] ?? 0) + w.gpus * w.cpuMilliPerGpu;
      demand[at + 2] = (demand[at + 2] ?? 0) + w.gpus * w.memoryBytesPerGpu;
    }
    const before = this.figuresBefore;
    const queues = this.allQueues;
    for (let i = 0; i < queues.length; i++) {
      const q = queues[i] as Queue;
      before[4 * i] = q.requested;
      before[4 * i + 1] = q.requestedCpuMilli;
      before[4 * i + 2] = q.requestedMemoryBytes;
      before[4 * i + 3] = q.fairShare;
      const project = q.level === "project";
      q.requested = project ? q.allocated + (demand[3 * i] ?? 0) : 0;
      q.requestedCpuMilli = project ? q.allocatedCpuMilli + (demand[3 * i + 1] ?? 0) : 0;
      q.requestedMemoryBytes = project ? q.allocatedMemoryBytes + (demand[3 * i + 2] ?? 0) : 0;
    }
    for (const q of queues)
      if (q.parent !== null) {
        q.parent.requested += q.requested;
        q.parent.requestedCpuMilli += q.requestedCpuMilli;
        q.parent.requestedMemoryBytes += q.requestedMemoryBytes;
      }
    this.divideFairShares();
    // A queue's revision tells the division which entries to make again.
    for (let i = 0; i < queues.length; i++) {
      const q = queues[i] as Queue;
      if (
        q.requested !== before[4 * i] ||
        q.requestedCpuMilli !== before[4 * i + 1] ||
        q.requestedMemoryBytes !== before[4 * i + 2] ||
        q.fairShare !== before[4 * i + 3]
      )
        q.revision++;
    }
  }
  /** Each project queue's pending demand (3 figures a queue), worked out again at each update. */
  private readonly pendingDemand: Float64Array;
  /** Each queue's request and fair share before a cycle's update (4 figures a queue), to notice changes. */
  private readonly figuresBefore: Float64Array;

  /** Divides each pool's GPUs among its queues (top-level ones, then each one's children) where their inputs changed. */
  private divideFairShares(): void {
    // A pool's shares depend only on what its queues request and what it holds: most cycles
    // change one pool's inputs at most, and only that pool is divided again.
    for (const pool of this.pools.values()) {
      const { tops, children, all } = this.queuesIn(pool.name);
      if (!this.shareInputsChanged(pool, all)) continue;
      assignFairShares(tops, divideFairShare(this.capacityOf(pool), tops));
      for (const parent of tops) {
        const kids = children.get(parent) ?? [];
        assignFairShares(kids, divideFairShare(parent.fairShare, kids));
      }
    }
  }

  /**
   * Each queue as the proportion plugin divided it this cycle, pool by pool, top-level queues
   * before their children; a queue whose figures did not change keeps its object.
   */
  private division(): readonly QueueDivision[] {
    const queues = this.divisionQueues();
    const revisions = this.divisionRevisions;
    const entries = this.divisionEntries;
    let changed = entries.length === 0;
    for (let i = 0; !changed && i < queues.length; i++) changed = revisions[i] !== (queues[i] as Queue).revision;
    // Most cycles change no queue: the same list then.
    if (!changed) return this.divisionList;
    queues.forEach((q, i) => {
      if (entries[i] !== undefined && revisions[i] === q.revision) return;
      revisions[i] = q.revision;
      entries[i] = {
        ...queueState(q, q.requestedCpuMilli - q.allocatedCpuMilli, q.requestedMemoryBytes - q.allocatedMemoryBytes),
        level: q.level,
        parent: q.parent?.name ?? null,
        limit: q.limit,
        requested: q.requested,
      };
    });
    this.divisionList = [...entries];
    return this.divisionList;
  }
  /** Per queue of divisionQueues(): the revision its entry was made at, and the entry. */
  private readonly divisionRevisions: number[] = [];
  private readonly divisionEntries: QueueDivision[] = [];
  private divisionList: readonly QueueDivision[] = [];

  /** Every queue, pool by pool, each pool's top-level queues before their children. */
  private divisionQueues(): readonly Queue[] {
    this.divisionOrder ??= [...this.pools.values()].flatMap((pool) => {
      const { tops, children } = this.queuesIn(pool.name);
      return [...tops, ...tops.flatMap((top) => children.get(top) ?? [])];
    });
    return this.divisionOrder;
  }
  private divisionOrder: readonly Queue[] | undefined;

  /** True when a queue's request or the pool's capacity differs from the last time its shares were divided. */
  private shareInputsChanged(pool: Pool, queues: readonly Queue[]): boolean {
    let inputs = this.lastShareInputs.get(pool);
    if (inputs === undefined) {
      inputs = [];
      this.lastShareInputs.set(pool, inputs);
    }
    let changed = inputs.length !== queues.length + 1;
    let i = 0;
    const note = (value: number) => {
      if (inputs[i] !== value) {
        inputs[i] = value;
        changed = true;
      }
      i++;
    };
    for (const q of queues) note(q.requested);
    note(pool.capacityVersion);
    inputs.length = i;
    return changed;
  }
  private readonly lastShareInputs = new Map<Pool, number[]>();

  /** Allocatable GPUs on ready nodes: recounted only when a node's status or a GPU's health changed. */
  private capacityOf(pool: Pool): number {
    const known = this.capacity.get(pool);
    if (known !== undefined && known.version === pool.capacityVersion) return known.gpus;
    let gpus = 0;
    for (const node of pool.nodes) {
      if (node.status !== "ready") continue;
      for (const gpu of node.gpus) if (isAllocatable(gpu)) gpus++;
    }
    this.capacity.set(pool, { version: pool.capacityVersion, gpus });
    return gpus;
  }
  private readonly capacity = new Map<Pool, { version: number; gpus: number }>();

  /** A pool's queues, its top-level ones and each one's children, in allQueues order (the queues never change). */
  private queuesIn(pool: string): QueueTree {
    let tree = this.queueTrees.get(pool);
    if (tree === undefined) {
      const all = this.allQueues.filter((q) => q.pool === pool);
      const tops = all.filter((q) => q.parent === null);
      tree = { all, tops, children: new Map(tops.map((parent) => [parent, all.filter((q) => q.parent === parent)])) };
      this.queueTrees.set(pool, tree);
    }
    return tree;
  }
  private readonly queueTrees = new Map<string, QueueTree>();

  /**
   * actions/allocate: repeatedly take the best queue's best job. Queue order after
   * plugins/proportion/queue_order: queues not over their fair share first, then those the job
   * keeps within deserved quota, then the smaller share (allocated + job) / max(deserved,
   * fair share), then the older queue. Job order within a queue: higher priority, then older.
   */
  private allocate(pending: readonly Workload[], reasons: Map<Workload, PendingReason[]>): Workload[] {
    const byQueue = new Map<Queue, Workload[]>();
    for (const w of pending) {
      const queue = this.preferredQueue(w);
      const list = byQueue.get(queue);
      if (list === undefined) byQueue.set(queue, [w]);
      else list.push(w);
    }
    // The best queue's next job, repeatedly: a heap of queues by the queue_order key of their head jobs.
    // Allocating only raises a queue's allocation, which only moves it back in the order, so a
    // queue whose key went stale is re-queued when it surfaces (lazy re-validation).
    /** Each queue's jobs in order, and how many of them have been tried. */
    const lines = new Map<Queue, { readonly jobs: readonly Workload[]; next: number }>(
      [...byQueue].map(([q, jobs]) => [q, { jobs, next: 0 }]),
    );
    interface Head {
      readonly queue: Queue;
      readonly job: Workload;
      readonly key: readonly [number, number, number, number];
    }
    const headOf = (queue: Queue): Head | undefined => {
      const line = lines.get(queue);
      const job = line?.jobs[line.next];
      return job === undefined ? undefined : { queue, job, key: queueKey(queue, job) };
    };
    const heads = new MinHeap<Head>((a, b) => compareKeys(a.key, b.key) < 0);
    for (const queue of byQueue.keys()) {
      const head = headOf(queue);
      if (head !== undefined) heads.push(head);
    }
    const left: Workload[] = [];
    // Smallest GPU count per pool that already failed to fit in this cycle: larger ones fail too.
    const failedSize = new Map<string, number>();
    for (;;) {
      const head = heads.pop();
      if (head === undefined) break;
      const current = queueKey(head.queue, head.job);
      if (compareKeys(current, head.key) !== 0) {
        heads.push({ ...head, key: current });
        continue;
      }
      const best = head.queue;
      const bestJob = head.job;
      const line = lines.get(best);
      if (line !== undefined) line.next++;
      if (!this.tryAllocate(bestJob, reasons, failedSize)) left.push(bestJob);
      const next = headOf(best);
      if (next !== undefined) heads.push(next);
    }
    return left;
  }

  private tryAllocate(w: Workload, reasons: Map<Workload, PendingReason[]>, failedSize: Map<string, number>): boolean {
    const found: PendingReason[] = [];
    for (const poolName of w.nodePools) {
      const pool = this.pool(poolName);
      const queue = this.queueOf(w, poolName);
      const blocked = capacityPolicy(w, queue, 0, poolName);
      if (blocked !== undefined) {
        found.push(blocked);
        continue;
      }
      const shape = podShape(w.type, w.gpus, pool.spec);
      const known = failedSize.get(poolName);
      const pods = shape === undefined || (known !== undefined && w.gpus >= known && shape.pods === 1) ? undefined : place(pool, shape);
      if (pods === undefined) {
        if (shape?.pods === 1) failedSize.set(poolName, Math.min(known ?? Number.POSITIVE_INFINITY, w.gpus));
        // Reasons are compared field by field every cycle (Simulation.unschedulable): object
        // literals of fixed shapes keep those reads fast.
        found.push(
          shape !== undefined && shape.pods > 1
            ? {
                nodePool: poolName,
                reason: "Unschedulable",
                requested: w.gpus,
                podsPlaced: Math.min(shape.pods - 1, this.nodesFitting(pool, shape.gpusPerPod)),
              }
            : { nodePool: poolName, reason: "Unschedulable", requested: w.gpus },
        );
        continue;
      }
      this.bind(w, pool, pods);
      this.trace.allocate.push({ workload: w, queue, outcome: "allocated", victims: [] });
      return true;
    }
    reasons.set(w, found);
    this.trace.allocate.push({ workload: w, queue: this.preferredQueue(w), outcome: "unschedulable", victims: [] });
    return false;
  }

  /** Ready nodes with room for a pod of `gpus` GPUs; counted again after a bind (bind() forgets the counts). */
  private nodesFitting(pool: Pool, gpus: number): number {
    const key = `${pool.name}/${gpus}`;
    let count = this.fitting.get(key);
    if (count === undefined) {
      count = 0;
      for (const node of pool.nodes) if (schedulableFreeGpus(node) >= gpus) count++;
      this.fitting.set(key, count);
    }
    return count;
  }
  private readonly fitting = new Map<string, number>();

  /**
   * actions/reclaim: a workload whose project is within its fair share takes GPUs from
   * preemptible workloads of queues above theirs (proportion/reclaimable). Victims come from
   * the most over-served queue first, lowest priority and newest first within it. A victim is
   * allowed while its queue (after the victims already chosen) is still above max(deserved,
   * fair share) — MaintainFairShare — or, when the reclaimer stays within its deserved quota,
   * still above deserved — GuaranteeDeservedQuota (proportion/reclaimable/strategies).
   * Workloads are indivisible, so the last victim may take its queue below that line.
   */
  private reclaimFor(w: Workload, running: RunningWorkloads, reasons: Map<Workload, PendingReason[]>, failed: SignatureSkips): boolean {
    return this.unlessSkipped("reclaim", w, failed, () => this.tryReclaim(w, running, reasons));
  }

  /**
   * Runs an action's attempt for `w` unless a job of its signature already failed in its project
   * queue this cycle and `w` is no easier (reclaim.go, preempt.go): then the attempt is traced as
   * skipped. A failed attempt makes `w` the job later ones are compared with.
   */
  private unlessSkipped(action: "reclaim" | "preempt", w: Workload, failed: SignatureSkips, attempt: () => boolean): boolean {
    const queue = this.preferredQueue(w);
    const trace = this.trace[action];
    const harder = failed.notEasierThan(w, queue);
    if (harder !== undefined) {
      trace.push({ workload: w, queue, outcome: "skipped", victims: [], notEasierThan: harder });
      return false;
    }
    const before = trace.length;
    const done = attempt();
    if (!done && trace.slice(before).some((a) => a.outcome === "no-strategy")) failed.record(w, queue);
    return done;
  }

  private tryReclaim(w: Workload, running: RunningWorkloads, reasons: Map<Workload, PendingReason[]>): boolean {
    for (const poolName of w.nodePools) {
      if (!resourcesWereTheProblem(reasons.get(w), poolName)) continue;
      const queue = this.queueOf(w, poolName);
      if (queue.allocated + w.gpus > queue.fairShare) continue;
      // Across departments the department queues are compared too (the level where paths diverge).
      const departmentWithinShare = queue.parent === null || queue.parent.allocated + w.gpus <= queue.parent.fairShare;
      const withinDeserved = queue.allocated + w.gpus <= queue.deserved;
      const candidates = [...running.preemptibleIn(poolName)]
        .filter((v) => this.isVictimIn(v, poolName) && v.project !== w.project)
        .filter((v) => departmentWithinShare || v.department === w.department)
        .map((v) => ({ v, q: this.comparedQueue(v, queue) }))
        .sort((a, b) => overService(b.q) - overService(a.q) || a.q.order - b.q.order || victimOrder(a.v, b.v));
      const taken = new Map<Queue, number>();
      const chosen = this.pickVictims(w, poolName, candidates, ({ v, q }) => {
        // What the victim's queue still holds after the victims already chosen (before this one).
        const remaining = q.allocated - (taken.get(q) ?? 0);
        const ok = remaining > Math.max(q.deserved, q.fairShare) || (withinDeserved && remaining > q.deserved);
        if (ok) taken.set(q, (taken.get(q) ?? 0) + v.gpus);
        return ok;
      });
      if (chosen === undefined) {
        this.trace.reclaim.push({ workload: w, queue, outcome: "no-strategy", victims: [] });
        continue;
      }
      this.trace.reclaim.push({
        workload: w,
        queue,
        outcome: "reclaimed",
        victims: chosen.victims.map((v) => ({ workload: v, pods: [...v.pods] })),
      });
      for (const victim of chosen.victims) this.actions.evict(victim, "reclaim", w);
      this.pipelineOrBind(w, this.pool(poolName), chosen);
      return true;
    }
    return false;
  }

  /**
   * actions/preempt: within one project queue and node pool, a workload takes GPUs from
   * preemptible workloads of strictly lower priority, lowest priority and newest first.
   */
  private preemptFor(w: Workload, running: RunningWorkloads, reasons: Map<Workload, PendingReason[]>, failed: SignatureSkips): boolean {
    return this.unlessSkipped("preempt", w, failed, () => this.tryPreempt(w, running, reasons));
  }

  private tryPreempt(w: Workload, running: RunningWorkloads, reasons: Map<Workload, PendingReason[]>): boolean {
    // One attempt per job, as actions/preempt logs it: over quota when its non-preemptible quota
    // blocks it in every pool it asks for, else preempted in the first pool that works.
    let overQuota = true;
    for (const poolName of w.nodePools) {
      const queue = this.queueOf(w, poolName);
      const poolReasons = reasons.get(w)?.filter((r) => r.nodePool === poolName) ?? [];
      // A job blocked by its non-preemptible quota cannot preempt its way in
      // (preempt.go checks IsNonPreemptibleJobOverQueueQuota first).
      if (poolReasons.some((r) => r.reason === "NonPreemptibleOverQuota")) continue;
      overQuota = false;
      const candidates = running
        .preemptibleOf(poolName, w.project)
        .filter((v) => this.isVictimIn(v, poolName) && v.priority < w.priority)
        .map((v) => ({ v, q: queue }));
      if (candidates.length === 0) continue;
      const chosen = this.pickVictims(w, poolName, candidates, () => true);
      if (chosen === undefined) continue;
      // The limit still applies once the victims have left.
      if (
        capacityPolicy(
          w,
          queue,
          chosen.victims.reduce((sum, v) => sum + v.gpus, 0),
          poolName,
        ) !== undefined
      )
        continue;
      this.trace.preempt.push({
        workload: w,
        queue,
        outcome: "preempted",
        victims: chosen.victims.map((v) => ({ workload: v, pods: [...v.pods] })),
      });
      for (const victim of chosen.victims) this.actions.evict(victim, "preempt", w);
      this.pipelineOrBind(w, this.pool(poolName), chosen);
      return true;
    }
    this.trace.preempt.push({
      workload: w,
      queue: this.preferredQueue(w),
      outcome: overQuota ? "over-quota" : "no-strategy",
      victims: [],
    });
    return false;
  }

  /** Adds eligible victims in order until the workload fits; keeps only those whose GPUs it uses. */
  private pickVictims<C extends { v: Workload; q: Queue }>(
    w: Workload,
    poolName: string,
    candidates: readonly C[],
    eligible: (candidate: C) => boolean,
  ): { victims: Workload[]; pods: PodAssignment[] } | undefined {
    const pool = this.pool(poolName);
    const shape = podShape(w.type, w.gpus, pool.spec);
    if (shape === undefined) return undefined;
    const freed = new Set<Gpu>();
    const victims: Workload[] = [];
    for (const candidate of candidates) {
      if (!eligible(candidate)) continue;
      victims.push(candidate.v);
      for (const pod of candidate.v.pods) for (const gpu of pod.gpus) if (isAllocatable(gpu)) freed.add(gpu);
      const pods = place(pool, shape, freed);
      if (pods === undefined) continue;
      const used = new Set(pods.flatMap((p) => p.gpus));
      const needed = victims.filter((v) => v.pods.some((pod) => pod.gpus.some((gpu) => used.has(gpu))));
      return { victims: needed, pods };
    }
    return undefined;
  }

  /** Queues are compared where their paths diverge: departments if they differ, else projects. */
  private comparedQueue(victim: Workload, reclaimerQueue: Queue): Queue {
    if (victim.pool === null) throw new Error(`victim ${victim.name} holds no pool`);
    const victimQueue = this.queueOf(victim, victim.pool);
    if (victimQueue.parent !== reclaimerQueue.parent && victimQueue.parent !== null) return victimQueue.parent;
    return victimQueue;
  }
}

/**
 * KAI's scheduling signatures (on by default): within a scope (a node pool for consolidation,
 * a project queue for reclaim and preempt), jobs with the same scheduling constraints share a
 * signature, and a job is skipped when one of them already failed this cycle and the job is no
 * easier: not fewer pending pods, and no pod asking for less. gpusynth's constraints are the
 * node pools a workload may use.
 */
class SignatureSkips {
  private readonly failed = new Map<unknown, Map<string, Workload>>();

  /** The failed job this one is no easier than, if any. */
  notEasierThan(w: Workload, scope: unknown): Workload | undefined {
    const failed = this.failed.get(scope)?.get(signatureOf(w));
    if (failed === undefined) return undefined;
    const pods = w.pendingPods.length;
    const failedPods = failed.pendingPods.length;
    const easier = failedPods > pods || w.gpus / Math.max(1, pods) < failed.gpus / Math.max(1, failedPods);
    return easier ? undefined : failed;
  }

  record(w: Workload, scope: unknown): void {
    let signatures = this.failed.get(scope);
    if (signatures === undefined) {
      signatures = new Map();
      this.failed.set(scope, signatures);
    }
    signatures.set(signatureOf(w), w);
  }
}

/** A workload's scheduling constraints as one string, made once per workload (jobs are compared every cycle). */
const signatures = new WeakMap<Workload, string>();
function signatureOf(w: Workload): string {
  let signature = signatures.get(w);
  if (signature === undefined) {
    signature = w.nodePools.join(",");
    signatures.set(w, signature);
  }
  return signature;
}

/**
 * capacity_policy: OverLimit when allocated + request exceeds the limit, and for
 * non-preemptible workloads NonPreemptibleOverQuota when non-preemptible allocation + request
 * exceeds the deserved quota — checked for the project queue and its department.
 */
function capacityPolicy(w: Workload, queue: Queue, releasing: number, nodePool: string): PendingReason | undefined {
  for (let q: Queue | null = queue; q !== null; q = q.parent) {
    if (q.limit >= 0 && q.allocated - releasing + w.gpus > q.limit) {
      return { reason: "OverLimit", queue: q.name, requested: w.gpus, limit: q.limit, allocated: q.allocated, nodePool };
    }
    if (!w.preemptible && q.allocatedNonPreemptible + w.gpus > q.deserved) {
      return {
        reason: "NonPreemptibleOverQuota",
        queue: q.name,
        requested: w.gpus,
        deserved: q.deserved,
        allocatedNonPreemptible: q.allocatedNonPreemptible,
        nodePool,
      };
    }
  }
  return undefined;
}

function resourcesWereTheProblem(reasons: readonly PendingReason[] | undefined, pool: string): boolean {
  return reasons?.some((r) => r.nodePool === pool && r.reason === "Unschedulable") ?? false;
}

function overService(q: Queue): number {
  return q.allocated / Math.max(q.deserved, q.fairShare, 1);
}

/** queue_order's key for a queue and its next job: compared lexicographically, smaller first. */
function queueKey(queue: Queue, job: Workload): [number, number, number, number] {
  return [
    queue.allocated > queue.fairShare ? 1 : 0,
    queue.allocated + job.gpus > queue.deserved ? 1 : 0,
    (queue.allocated + job.gpus) / Math.max(queue.deserved, queue.fairShare, 1),
    queue.order,
  ];
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x - y;
  }
  return 0;
}

/** The node pool a workload asks for first: its demand counts there (validation guarantees one). */
function preferredPool(w: Workload): string {
  const pool = w.nodePools[0];
  if (pool === undefined) throw new Error(`workload ${w.name} asks for no node pool`);
  return pool;
}

/** Each queue's fair share, as divided for those queues in order. */
function assignFairShares(queues: readonly Queue[], shares: readonly number[]): void {
  queues.forEach((queue, i) => {
    queue.fairShare = shares[i] ?? 0;
  });
}

/**
 * Bin-packing placement (plugins/nodeplacement, binpack is KAI's default): each pod goes to
 * the node with the fewest free GPUs that still fits it; GPUs are taken lowest index first.
 * `freed` GPUs count as free (held by victims that would be evicted).
 */
function place(pool: Pool, shape: PodShape, freed?: ReadonlySet<Gpu>): PodAssignment[] | undefined {
  // Not enough free GPUs in the whole pool: no node search can succeed.
  if (pool.schedulableFree + (freed?.size ?? 0) < shape.pods * shape.gpusPerPod) return undefined;
  const freeOn = (node: Node): number => {
    let free = schedulableFreeGpus(node);
    if (freed !== undefined && node.status === "ready") for (const gpu of node.gpus) if (freed.has(gpu)) free++;
    return free;
  };
  const gpusOn = (node: Node): Gpu[] =>
    node.gpus.filter((gpu) => isAllocatable(gpu) && (gpu.holder === null || freed?.has(gpu) === true)).slice(0, shape.gpusPerPod);
  if (shape.pods === 1) {
    // The common case, one pod: the first of the fullest nodes that fit, in one pass.
    let best: Node | undefined;
    let bestFree = Number.POSITIVE_INFINITY;
    for (const node of pool.nodes) {
      const free = freeOn(node);
      if (free >= shape.gpusPerPod && free < bestFree) {
        best = node;
        bestFree = free;
        if (free === shape.gpusPerPod) break; // no node fits more tightly
      }
    }
    return best === undefined ? undefined : [{ node: best, gpus: gpusOn(best) }];
  }
  // One pod of a gang per node, each on the fullest node that fits: the candidates in order of
  // free GPUs (ties in node order, as the sort is stable) give pod 1 its node, pod 2 the next…
  const candidates: Array<{ node: Node; free: number }> = [];
  for (const node of pool.nodes) {
    const free = freeOn(node);
    if (free >= shape.gpusPerPod) candidates.push({ node, free });
  }
  if (candidates.length < shape.pods) return undefined;
  candidates.sort((a, b) => a.free - b.free);
  return candidates.slice(0, shape.pods).map(({ node }) => ({ node, gpus: gpusOn(node) }));
}

/** A cycle's division when the run reports none. */
