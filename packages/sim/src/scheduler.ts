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
import type { AttemptOutcome, PendingReason, QueueDivision } from "./domain-events.js";
import { divideFairShare } from "./fair-share.js";
import { MinHeap } from "./min-heap.js";
import { type RunningWorkloads, victimOrder } from "./running-workloads.js";
import {
  type Gpu,
  isAllocatable,
  isFree,
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

/** The victims of an attempt that evicted none: one list for all (a backlog's cycles make millions of attempts). */
const NO_VICTIMS: CycleAttempt["victims"] = Object.freeze([]);

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

/**
 * What every action asks of a pending job, worked out once per workload: its project queue and
 * pod shape in each node pool it may use, and its scheduling signature. A cycle attempts every
 * pending job in up to four actions; looking these up each time was a third of its work.
 */
class JobPlan {
  /** The pools the job may use, most preferred first, with its project's queue and its pod shape in each. */
  readonly pools: readonly Pool[];
  readonly queues: readonly Queue[];
  readonly shapes: ReadonlyArray<PodShape | undefined>;
  /** The queue of its preferred pool, where its demand counts. */
  readonly preferred: Queue;
  /** Its scheduling constraints as one string (SignatureSkips). */
  readonly signature: string;
  /** Why allocate could not place it this cycle (set by allocate for every job it attempts). */
  reasons: PendingReason[] = [];
  /**
   * What allocate's last failed attempt read that can move, pool by pool (allocateInputsOf);
   * undefined when it has none. Allocate fails the same way while it holds (allocateInputsHold).
   */
  allocateInputs: number[] | undefined;
  /** That failed attempt, as traced. */
  allocateFailure: CycleAttempt | undefined;
  /**
   * Per pool (by index), reclaim's last failed attempt there and the pool's version then
   * (Scheduler.poolVersion): reclaim fails the same way while it holds.
   */
  readonly reclaimFailures: Array<{ readonly version: number; readonly failure: CycleAttempt } | undefined> = [];
  /** Preempt's last failed attempt, with allocate's reasons then and each pool's version. */
  preemptFailure: { readonly reasons: PendingReason[]; readonly versions: number[]; readonly failure: CycleAttempt } | undefined;

  constructor(
    readonly w: Workload,
    pools: readonly Pool[],
    queues: readonly Queue[],
  ) {
    this.pools = pools;
    this.queues = queues;
    this.shapes = pools.map((pool) => podShape(w.type, w.gpus, pool.spec));
    const preferred = queues[0];
    if (preferred === undefined) throw new Error(`workload ${w.name} asks for no node pool`);
    this.preferred = preferred;
    this.signature = w.nodePools.join(",");
  }
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
    this.holdsDemand = new Uint8Array(allQueues.length);
    this.nextDemand = new Float64Array(3 * allQueues.length);
    this.holdsNext = new Uint8Array(allQueues.length);
    this.dirtyMark = new Uint8Array(allQueues.length);
    this.rememberedMark = new Uint8Array(allQueues.length);
    this.movedMark = new Uint8Array(allQueues.length);
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
    return this.planOf(workload).preferred;
  }

  /** The job's plan, made the first time a cycle meets it. */
  private planOf(w: Workload): JobPlan {
    let plan = this.plans.get(w);
    if (plan === undefined) {
      plan = new JobPlan(
        w,
        w.nodePools.map((name) => this.pool(name)),
        w.nodePools.map((name) => this.queueOf(w, name)),
      );
      this.plans.set(w, plan);
    }
    return plan;
  }
  private readonly plans = new WeakMap<Workload, JobPlan>();

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
    const pending: JobPlan[] = [];
    this.trace = { allocate: [], consolidation: [], reclaim: [], preempt: [] };
    this.acted = false;
    for (const w of waiting) {
      const plan = this.planOf(w);
      if (w.pipelinedUntil === null) pending.push(plan);
      else this.trace.allocate.push({ workload: w, queue: plan.preferred, outcome: "pipelined", victims: NO_VICTIMS });
    }
    this.updateFairShares(pending);
    const division = this.division();
    // Those started last cycle may be victims from now on: what reclaim reads of their pools moved.
    for (const w of this.startedThisCycle) if (w.pool !== null) this.eligibleMoved.set(w.pool, (this.eligibleMoved.get(w.pool) ?? 0) + 1);
    this.startedThisCycle.clear();
    const stillPending = this.allocate(pending);
    this.consolidate(stillPending);
    const reclaimFailed = this.reclaimFailed.cleared();
    const afterReclaim = stillPending.filter((job) => !this.reclaimFor(job, running, reclaimFailed));
    const preemptFailed = this.preemptFailed.cleared();
    const afterPreempt = afterReclaim.filter((job) => !this.preemptFor(job, running, preemptFailed));
    for (const job of afterPreempt) this.actions.unschedulable(job.w, job.reasons);
    // What the next session opens with when nothing else changes: after this cycle's binds and
    // pipelinings (the scheduler's idle cycles repeat it).
    let divisionAfter = division;
    if (this.acted) {
      this.updateFairShares(pending.filter((job) => job.w.phase === "Pending" && job.w.pipelinedUntil === null));
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
  private consolidate(stillPending: readonly JobPlan[]): void {
    const failed = this.consolidationFailed.cleared();
    for (const job of stillPending) {
      const w = job.w;
      if (!w.preemptible) continue;
      // Its preferred pool is the scope.
      const pool = job.pools[0] as Pool;
      const queue = job.preferred;
      const harder = failed.notEasierThan(job, pool);
      if (harder !== undefined) {
        this.trace.consolidation.push({ workload: w, queue, outcome: "skipped", victims: NO_VICTIMS, notEasierThan: harder });
        continue;
      }
      this.trace.consolidation.push({
        workload: w,
        queue,
        outcome: pool.schedulableFree < w.gpus ? "not-enough-gpus" : "no-strategy",
        victims: NO_VICTIMS,
      });
      failed.record(job, pool);
    }
  }

  /** Workloads this cycle bound: not victims before the next cycle. */
  private readonly startedThisCycle = new Set<Workload>();

  /** Each action's failed signatures, cleared at each cycle (kept, not made anew: a cycle runs every few simulated seconds). */
  private readonly consolidationFailed = new SignatureSkips();
  private readonly reclaimFailed = new SignatureSkips();
  private readonly preemptFailed = new SignatureSkips();

  private bind(w: Workload, pool: Pool, pods: readonly PodAssignment[]): void {
    this.startedThisCycle.add(w);
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

  /**
   * Whether this cycle bound a job in allocate or evicted victims: the division after it is then
   * worked out again (set where it happens, not found by reading every attempt of the trace).
   */
  private acted = false;

  private trace: { allocate: CycleAttempt[]; consolidation: CycleAttempt[]; reclaim: CycleAttempt[]; preempt: CycleAttempt[] } = {
    allocate: [],
    consolidation: [],
    reclaim: [],
    preempt: [],
  };

  /**
   * A project queue's allocation moved (Simulation's account): its request is worked out again at
   * the next fair-share update. The update otherwise visits only the queues whose pending demand
   * moved: a platform has hundreds of queues, and a cycle changes a few.
   */
  allocationMoved(queue: Queue): void {
    this.markDirty(queue.order);
    // Its revision and its departments' move with it (Simulation's account).
    for (let q: Queue | null = queue; q !== null; q = q.parent) this.revisionMoved(q);
  }

  /**
   * plugins/proportion: fair share per queue, department level first, then projects. What a
   * queue requests is its allocation plus its pending demand (a project's), or its children's
   * (a department's, summed in declaration order); only the queues whose allocation or demand
   * moved since the last update, their departments and the pools they are in are visited.
   */
  private updateFairShares(pending: readonly JobPlan[]): void {
    const queues = this.allQueues;
    const demand = this.pendingDemand;
    // The first update (no pool divided yet) visits every queue.
    if (this.dividedAt.size === 0) for (const q of queues) this.markDirty(q.order);
    // What each project queue's pending workloads ask for now: GPUs, CPU millicores, memory bytes,
    // at 3 × the queue's index (summed in job order, as always).
    const next = this.nextDemand;
    const nextHolders = this.nextHolders;
    for (const { w, preferred } of pending) {
      // A pending workload's demand is counted in its preferred node pool only.
      const i = preferred.order;
      if (this.holdsNext[i] === 0) {
        this.holdsNext[i] = 1;
        nextHolders.push(i);
        next[3 * i] = 0;
        next[3 * i + 1] = 0;
        next[3 * i + 2] = 0;
      }
      next[3 * i] = (next[3 * i] ?? 0) + w.gpus;
      next[3 * i + 1] = (next[3 * i + 1] ?? 0) + w.gpus * w.cpuMilliPerGpu;
      next[3 * i + 2] = (next[3 * i + 2] ?? 0) + w.gpus * w.memoryBytesPerGpu;
    }
    // Only a queue whose demand moved is visited: most cycles leave most waiting jobs waiting.
    for (const i of this.demandHolders) {
      if (this.holdsNext[i] === 1) continue;
      this.markDirty(i);
      demand[3 * i] = 0;
      demand[3 * i + 1] = 0;
      demand[3 * i + 2] = 0;
      this.holdsDemand[i] = 0;
    }
    for (const i of nextHolders) {
      this.holdsNext[i] = 0;
      if (
        this.holdsDemand[i] === 1 &&
        next[3 * i] === demand[3 * i] &&
        next[3 * i + 1] === demand[3 * i + 1] &&
        next[3 * i + 2] === demand[3 * i + 2]
      )
        continue;
      this.markDirty(i);
      this.holdsDemand[i] = 1;
      demand[3 * i] = next[3 * i] as number;
      demand[3 * i + 1] = next[3 * i + 1] as number;
      demand[3 * i + 2] = next[3 * i + 2] as number;
    }
    // This update's holders are the next one's last.
    this.nextHolders = this.demandHolders;
    this.nextHolders.length = 0;
    this.demandHolders = nextHolders;
    // The dirty project queues' requests, then their departments', each the sum of its children.
    const dirty = this.dirtyQueues;
    const departments = new Set<Queue>();
    for (const i of dirty) {
      const q = queues[i] as Queue;
      this.remember(q);
      if (q.level !== "project") {
        departments.add(q);
        continue;
      }
      q.requested = q.allocated + (demand[3 * i] ?? 0);
      q.requestedCpuMilli = q.allocatedCpuMilli + (demand[3 * i + 1] ?? 0);
      q.requestedMemoryBytes = q.allocatedMemoryBytes + (demand[3 * i + 2] ?? 0);
      if (q.parent !== null) {
        this.remember(q.parent);
        departments.add(q.parent);
      }
    }
    for (const parent of departments) {
      parent.requested = 0;
      parent.requestedCpuMilli = 0;
      parent.requestedMemoryBytes = 0;
      for (const child of this.childrenOf(parent)) {
        parent.requested += child.requested;
        parent.requestedCpuMilli += child.requestedCpuMilli;
        parent.requestedMemoryBytes += child.requestedMemoryBytes;
      }
    }
    this.divideFairShares();
    // A queue's revision tells the division which entries to make again.
    const before = this.figuresBefore;
    for (const q of this.remembered) {
      const i = q.order;
      if (
        q.requested !== before[4 * i] ||
        q.requestedCpuMilli !== before[4 * i + 1] ||
        q.requestedMemoryBytes !== before[4 * i + 2] ||
        q.fairShare !== before[4 * i + 3]
      ) {
        q.revision++;
        this.revisionMoved(q);
      }
      this.rememberedMark[i] = 0;
    }
    this.remembered.length = 0;
    for (const i of dirty) this.dirtyMark[i] = 0;
    dirty.length = 0;
  }

  private markDirty(i: number): void {
    if (this.dirtyMark[i] === 1) return;
    this.dirtyMark[i] = 1;
    this.dirtyQueues.push(i);
  }

  /** Keeps a queue's figures as they were before this update (once). */
  private remember(q: Queue): void {
    const i = q.order;
    if (this.rememberedMark[i] === 1) return;
    this.rememberedMark[i] = 1;
    this.remembered.push(q);
    const before = this.figuresBefore;
    before[4 * i] = q.requested;
    before[4 * i + 1] = q.requestedCpuMilli;
    before[4 * i + 2] = q.requestedMemoryBytes;
    before[4 * i + 3] = q.fairShare;
  }

  /** A department queue's children, in declaration order. */
  private childrenOf(parent: Queue): readonly Queue[] {
    return this.queuesIn(parent.pool).children.get(parent) ?? [];
  }

  /** Each project queue's pending demand (3 figures a queue), for the queues in demandHolders. */
  private readonly pendingDemand: Float64Array;
  /** The project queues with pending demand at the last update, and a mark per queue for them. */
  private demandHolders: number[] = [];
  private readonly holdsDemand: Uint8Array;
  /** The same, as an update counts them again (swapped with the last update's once compared). */
  private readonly nextDemand: Float64Array;
  private nextHolders: number[] = [];
  private readonly holdsNext: Uint8Array;
  /** The queues to visit at the next update (their allocation or demand moved), with a mark per queue. */
  private readonly dirtyQueues: number[] = [];
  private readonly dirtyMark: Uint8Array;
  /**
   * The queues whose request this update works out again (and their departments), with their
   * figures before it (4 a queue) and a mark per queue; a queue whose share alone moves (its pool
   * divided again) moves its revision in assignFairShares.
   */
  private readonly remembered: Queue[] = [];
  private readonly rememberedMark: Uint8Array;
  private readonly figuresBefore: Float64Array;

  /**
   * Divides each pool's GPUs among its queues (top-level ones, then each one's children) where
   * their inputs changed: a queue's request, or the pool's capacity. Most cycles change one
   * pool's inputs at most, and only that pool is divided again.
   */
  private divideFairShares(): void {
    const before = this.figuresBefore;
    const changed = new Set<string>();
    for (const q of this.remembered) if (q.requested !== before[4 * q.order]) changed.add(q.pool);
    for (const pool of this.pools.values()) {
      if (!changed.has(pool.name) && this.dividedAt.get(pool) === pool.capacityVersion) continue;
      this.dividedAt.set(pool, pool.capacityVersion);
      const { tops, children } = this.queuesIn(pool.name);
      this.assignFairShares(tops, divideFairShare(this.capacityOf(pool), tops));
      for (const parent of tops) {
        const kids = children.get(parent) ?? [];
        this.assignFairShares(kids, divideFairShare(parent.fairShare, kids));
      }
    }
  }
  /**
   * Each queue's fair share, as divided for those queues in order. A queue the update does not
   * otherwise visit moves its revision here, when its share moved.
   */
  private assignFairShares(queues: readonly Queue[], shares: readonly number[]): void {
    for (let i = 0; i < queues.length; i++) {
      const queue = queues[i] as Queue;
      const share = shares[i] ?? 0;
      if (queue.fairShare !== share && this.rememberedMark[queue.order] === 0) {
        queue.revision++;
        this.revisionMoved(queue);
      }
      queue.fairShare = share;
    }
  }

  /** The capacity version each pool was last divided at. */
  private readonly dividedAt = new Map<Pool, number>();

  /**
   * Each queue as the proportion plugin divided it this cycle, pool by pool, top-level queues
   * before their children; a queue whose figures did not change keeps its object.
   */
  private division(): readonly QueueDivision[] {
    const queues = this.divisionQueues();
    const revisions = this.divisionRevisions;
    const entries = this.divisionEntries;
    let changed = false;
    if (entries.length === 0) {
      queues.forEach((q, i) => {
        revisions[i] = q.revision;
        entries[i] = queueDivision(q);
      });
      changed = true;
    }
    // Only the queues whose revision moved are looked at: a cycle moves a few of hundreds.
    for (const q of this.movedQueues) {
      this.movedMark[q.order] = 0;
      const i = this.divisionIndex.get(q);
      if (i === undefined || revisions[i] === q.revision) continue;
      revisions[i] = q.revision;
      entries[i] = queueDivision(q);
      changed = true;
    }
    this.movedQueues.length = 0;
    // Most cycles change no queue: the same list then.
    if (changed) this.divisionList = [...entries];
    return this.divisionList;
  }

  /** Notes that a queue's revision moved, for the next division and for reclaim's and preempt's reuse (poolVersion). */
  private revisionMoved(q: Queue): void {
    this.queueVersions.set(q.pool, (this.queueVersions.get(q.pool) ?? 0) + 1);
    if (this.movedMark[q.order] === 1) return;
    this.movedMark[q.order] = 1;
    this.movedQueues.push(q);
  }
  /** Per pool, how many times any of its queues' figures moved (reclaim and preempt read them). */
  private readonly queueVersions = new Map<string, number>();
  /** Per pool, how many times workloads started in a cycle became victims at the next one (isVictimIn). */
  private readonly eligibleMoved = new Map<string, number>();

  /**
   * What a reclaim or preempt attempt in `pool` reads that can move (beside the job's own, which do
   * not), as one count of changes: its free GPUs (placement), its nodes' status and GPUs' health,
   * its running workloads (the candidates, their order, which terminate), its queues' figures (the
   * job's fair share and quota, each candidate's over-service), and the workloads started in a
   * cycle, which are victims from the next one (isVictimIn). Each count only grows, so their sum
   * is the same only while none has moved: an attempt that failed then fails the same way, with
   * the same trace, and outcomes and logs are those of attempting again.
   */
  private poolVersion(pool: Pool, running: RunningWorkloads): number {
    return (
      pool.freeVersion +
      pool.capacityVersion +
      running.versionIn(pool.name) +
      (this.queueVersions.get(pool.name) ?? 0) +
      (this.eligibleMoved.get(pool.name) ?? 0)
    );
  }

  /** Whether each of `pools` has the version it had then. */
  private poolsHold(pools: readonly Pool[], versions: readonly number[], running: RunningWorkloads): boolean {
    for (let i = 0; i < pools.length; i++) if (this.poolVersion(pools[i] as Pool, running) !== versions[i]) return false;
    return true;
  }

  /** The queues whose revision moved since the last division, with a mark per queue. */
  private readonly movedQueues: Queue[] = [];
  private readonly movedMark: Uint8Array;
  /** Per queue of divisionQueues(): the revision its entry was made at, and the entry. */
  private readonly divisionRevisions: number[] = [];
  private readonly divisionEntries: QueueDivision[] = [];
  private divisionList: readonly QueueDivision[] = [];

  /** Every queue, pool by pool, each pool's top-level queues before their children. */
  private divisionQueues(): readonly Queue[] {
    if (this.divisionOrder === undefined) {
      this.divisionOrder = [...this.pools.values()].flatMap((pool) => {
        const { tops, children } = this.queuesIn(pool.name);
        return [...tops, ...tops.flatMap((top) => children.get(top) ?? [])];
      });
      this.divisionOrder.forEach((q, i) => {
        this.divisionIndex.set(q, i);
      });
    }
    return this.divisionOrder;
  }
  /** Each queue's place in divisionQueues(). */
  private readonly divisionIndex = new Map<Queue, number>();
  private divisionOrder: readonly Queue[] | undefined;

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
   * actions/allocate: repeatedly take the best department's best project's best job, as
   * actions/utils/job_order_by_queue.go walks the queue tree (a department is compared with the
   * other departments by its own figures and its best project's next job; a project without a
   * department stands alone). Queue order after plugins/proportion/queue_order, at each level:
   * queues not over their fair share first, then those the job keeps within deserved quota, then
   * the smaller share (allocated + job) / max(deserved, fair share), then the older queue. Job
   * order within a queue: higher priority, then older.
   */
  private allocate(pending: readonly JobPlan[]): JobPlan[] {
    // Each queue's jobs in order (its line, kept from cycle to cycle and refilled).
    // Emptied of the last cycle's jobs (no workload is kept alive by a line it has left).
    for (const line of this.linesInUse) line.clear();
    this.linesInUse.length = 0;
    for (const job of pending) {
      let line = this.lines.get(job.preferred);
      if (line === undefined) {
        line = new QueueLine(job.preferred);
        this.lines.set(job.preferred, line);
      }
      if (line.jobs.length === 0) this.linesInUse.push(line);
      line.jobs.push(job);
    }
    // The best department's best queue's next job, repeatedly: a heap of departments, each with a
    // heap of its queues, by the queue_order keys of their head jobs. Allocating only raises
    // queues' allocations, which only moves them back in the order, so a key that went stale (a
    // job bound in another pool's queue) is worked out again when it surfaces (lazy re-validation).
    const departments = this.departments;
    for (const line of this.linesInUse) {
      const department = this.departmentLineOf(line.queue);
      if (department.lines.size === 0) this.departmentsInUse.push(department);
      department.lines.push(line.keyedBy(line.jobs[0] as JobPlan));
    }
    for (const department of this.departmentsInUse) departments.push(department.keyed());
    this.departmentsInUse.length = 0;
    const left: JobPlan[] = [];
    // Smallest GPU count per pool that already failed to fit in this cycle: larger ones fail too.
    // What failed in an earlier cycle still fails while the pool's free GPUs have not moved since.
    const failedSize = new Map<Pool, number>();
    for (const [pool, failed] of this.failedFits) if (failed.version === pool.freeVersion) failedSize.set(pool, failed.gpus);
    for (;;) {
      const department = departments.pop();
      if (department === undefined) break;
      const line = department.lines.pop() as QueueLine;
      const job = line.job as JobPlan;
      if (!line.keyCurrent()) {
        department.lines.push(line.keyedBy(job));
        departments.push(department.keyed());
        continue;
      }
      if (!department.keyCurrent(line)) {
        department.lines.push(line);
        departments.push(department.keyed());
        continue;
      }
      line.next++;
      if (!this.tryAllocate(job, failedSize)) left.push(job);
      if (line.next < line.jobs.length) department.lines.push(line.keyedBy(line.jobs[line.next] as JobPlan));
      if (department.lines.size > 0) departments.push(department.keyed());
      else department.emptied();
    }
    // Binds only took free GPUs since each failure: each still holds where the pools are now.
    for (const [pool, gpus] of failedSize) this.failedFits.set(pool, { version: pool.freeVersion, gpus });
    return left;
  }
  /** Per pool, the smallest single pod that failed to fit, and the pool's free version then. */
  private readonly failedFits = new Map<Pool, { readonly version: number; readonly gpus: number }>();
  /** Each queue's line, made once; those filled this cycle. */
  private readonly lines = new Map<Queue, QueueLine>();
  private readonly linesInUse: QueueLine[] = [];
  /** Each department's heap of its queues' lines, made once; allocate's heap of them (empty between cycles). */
  private readonly departmentLines = new Map<Queue, DepartmentLine>();
  private readonly departmentsInUse: DepartmentLine[] = [];
  private readonly departments = new MinHeap<DepartmentLine>(keyBefore);

  /** The line of a project queue's department, or the project's own where it has none. */
  private departmentLineOf(queue: Queue): DepartmentLine {
    const top = queue.parent ?? queue;
    let department = this.departmentLines.get(top);
    if (department === undefined) {
      department = new DepartmentLine(top);
      this.departmentLines.set(top, department);
    }
    return department;
  }

  private tryAllocate(job: JobPlan, failedSize: Map<Pool, number>): boolean {
    // Most of a backlog's jobs meet their pools and queues as they left them: the same failure.
    if (job.allocateFailure !== undefined && allocateInputsHold(job)) {
      this.trace.allocate.push(job.allocateFailure);
      return false;
    }
    const w = job.w;
    const found: PendingReason[] = [];
    for (let i = 0; i < job.pools.length; i++) {
      const pool = job.pools[i] as Pool;
      const poolName = pool.name;
      const queue = job.queues[i] as Queue;
      const blocked = capacityPolicy(w, queue, 0, poolName);
      if (blocked !== undefined) {
        found.push(blocked);
        continue;
      }
      const shape = job.shapes[i];
      const known = failedSize.get(pool);
      // A gang fits where enough nodes fit one of its pods each (what place() would look for),
      // which the pool's count of fitting nodes says without a placement.
      const hopeless =
        shape === undefined ||
        (shape.pods === 1 ? known !== undefined && w.gpus >= known : this.nodesFitting(pool, shape.gpusPerPod) < shape.pods);
      const pods = hopeless ? undefined : place(pool, shape);
      if (pods === undefined) {
        if (shape?.pods === 1) failedSize.set(pool, Math.min(known ?? Number.POSITIVE_INFINITY, w.gpus));
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
      this.trace.allocate.push({ workload: w, queue, outcome: "allocated", victims: NO_VICTIMS });
      this.acted = true;
      return true;
    }
    job.reasons = found;
    job.allocateInputs = allocateInputsOf(job);
    job.allocateFailure = { workload: w, queue: job.preferred, outcome: "unschedulable", victims: NO_VICTIMS };
    this.trace.allocate.push(job.allocateFailure);
    return false;
  }

  /**
   * Ready nodes with room for a pod of `gpus` GPUs; counted again once the pool's free GPUs moved
   * (its freeVersion), which most cycles leave alone: a pending gang is told how many of its pods
   * would fit at every cycle.
   */
  private nodesFitting(pool: Pool, gpus: number): number {
    let fitting = this.fitting.get(pool);
    if (fitting === undefined || fitting.version !== pool.freeVersion) {
      fitting = { version: pool.freeVersion, counts: [] };
      this.fitting.set(pool, fitting);
    }
    let count = fitting.counts[gpus];
    if (count === undefined) {
      count = 0;
      for (const node of pool.nodes) if (schedulableFreeGpus(node) >= gpus) count++;
      fitting.counts[gpus] = count;
    }
    return count;
  }
  /** Per pool, by GPUs per pod: how many nodes fit one, at the pool's free version. */
  private readonly fitting = new Map<Pool, { readonly version: number; readonly counts: number[] }>();

  /**
   * actions/reclaim: a workload whose project is within its fair share takes GPUs from
   * preemptible workloads of queues above theirs (proportion/reclaimable). Victims come from
   * the most over-served queue first, lowest priority and newest first within it. A victim is
   * allowed while its queue (after the victims already chosen) is still above max(deserved,
   * fair share) — MaintainFairShare — or, when the reclaimer stays within its deserved quota,
   * still above deserved — GuaranteeDeservedQuota (proportion/reclaimable/strategies).
   * Workloads are indivisible, so the last victim may take its queue below that line.
   */
  private reclaimFor(job: JobPlan, running: RunningWorkloads, failed: SignatureSkips): boolean {
    return this.unlessSkipped("reclaim", job, failed, running);
  }

  /**
   * Runs an action's attempt for `w` unless a job of its signature already failed in its project
   * queue this cycle and `w` is no easier (reclaim.go, preempt.go): then the attempt is traced as
   * skipped. A failed attempt makes `w` the job later ones are compared with.
   */
  private unlessSkipped(action: "reclaim" | "preempt", job: JobPlan, failed: SignatureSkips, running: RunningWorkloads): boolean {
    const queue = job.preferred;
    const trace = this.trace[action];
    const harder = failed.notEasierThan(job, queue);
    if (harder !== undefined) {
      trace.push({ workload: job.w, queue, outcome: "skipped", victims: NO_VICTIMS, notEasierThan: harder });
      return false;
    }
    const before = trace.length;
    // The action's method called here, not through a closure: a cycle attempts every pending job.
    const done = action === "reclaim" ? this.tryReclaim(job, running) : this.tryPreempt(job, running);
    if (!done) {
      for (let i = before; i < trace.length; i++)
        if (trace[i]?.outcome === "no-strategy") {
          failed.record(job, queue);
          break;
        }
    }
    return done;
  }

  private tryReclaim(job: JobPlan, running: RunningWorkloads): boolean {
    const w = job.w;
    for (let i = 0; i < job.pools.length; i++) {
      const pool = job.pools[i] as Pool;
      const poolName = pool.name;
      if (!hasReason(job.reasons, poolName, "Unschedulable")) continue;
      const queue = job.queues[i] as Queue;
      if (queue.allocated + w.gpus > queue.fairShare) continue;
      // Across departments the department queues are compared too (the level where paths diverge).
      const departmentWithinShare = queue.parent === null || queue.parent.allocated + w.gpus <= queue.parent.fairShare;
      const withinDeserved = queue.allocated + w.gpus <= queue.deserved;
      // A backlog's jobs mostly meet a pool as they left it: then they fail as they did.
      const last = job.reclaimFailures[i];
      if (last !== undefined && this.poolVersion(pool, running) === last.version) {
        this.trace.reclaim.push(last.failure);
        continue;
      }
      // Each candidate's over-service worked out once, not at every comparison of the sort. A
      // queue that holds no more than it may keep before giving any victim (what it still holds
      // only falls as its victims are chosen) gives none: its workloads are left out of the sort.
      const candidates: Array<{ v: Workload; q: Queue; overService: number }> = [];
      for (const v of running.preemptibleIn(poolName)) {
        if (!this.isVictimIn(v, poolName) || v.project === w.project) continue;
        if (!departmentWithinShare && v.department !== w.department) continue;
        const q = this.comparedQueue(v, queue);
        if (q.allocated <= (withinDeserved ? q.deserved : Math.max(q.deserved, q.fairShare))) continue;
        candidates.push({ v, q, overService: overService(q) });
      }
      candidates.sort((a, b) => b.overService - a.overService || a.q.order - b.q.order || victimOrder(a.v, b.v));
      const taken = new Map<Queue, number>();
      const chosen = this.pickVictims(pool, job.shapes[i], candidates, ({ v, q }) => {
        // What the victim's queue still holds after the victims already chosen (before this one).
        const remaining = q.allocated - (taken.get(q) ?? 0);
        const ok = remaining > Math.max(q.deserved, q.fairShare) || (withinDeserved && remaining > q.deserved);
        if (ok) taken.set(q, (taken.get(q) ?? 0) + v.gpus);
        return ok;
      });
      if (chosen === undefined) {
        const failure: CycleAttempt = { workload: w, queue, outcome: "no-strategy", victims: NO_VICTIMS };
        job.reclaimFailures[i] = { version: this.poolVersion(pool, running), failure };
        this.trace.reclaim.push(failure);
        continue;
      }
      this.trace.reclaim.push({
        workload: w,
        queue,
        outcome: "reclaimed",
        victims: chosen.victims.map((v) => ({ workload: v, pods: [...v.pods] })),
      });
      for (const victim of chosen.victims) this.actions.evict(victim, "reclaim", w);
      if (chosen.victims.length > 0) this.acted = true;
      this.pipelineOrBind(w, pool, chosen);
      return true;
    }
    return false;
  }

  /**
   * actions/preempt: within one project queue and node pool, a workload takes GPUs from
   * preemptible workloads of strictly lower priority, lowest priority and newest first.
   */
  private preemptFor(job: JobPlan, running: RunningWorkloads, failed: SignatureSkips): boolean {
    return this.unlessSkipped("preempt", job, failed, running);
  }

  private tryPreempt(job: JobPlan, running: RunningWorkloads): boolean {
    const w = job.w;
    // Allocate's reasons (the same array while its failure holds) and the job's pools as they were.
    const last = job.preemptFailure;
    if (last !== undefined && last.reasons === job.reasons && this.poolsHold(job.pools, last.versions, running)) {
      this.trace.preempt.push(last.failure);
      return false;
    }
    // One attempt per job, as actions/preempt logs it: over quota when its non-preemptible quota
    // blocks it in every pool it asks for, else preempted in the first pool that works.
    let overQuota = true;
    for (let i = 0; i < job.pools.length; i++) {
      const pool = job.pools[i] as Pool;
      const poolName = pool.name;
      const queue = job.queues[i] as Queue;
      // A job blocked by its non-preemptible quota cannot preempt its way in
      // (preempt.go checks IsNonPreemptibleJobOverQueueQuota first).
      if (hasReason(job.reasons, poolName, "NonPreemptibleOverQuota")) continue;
      overQuota = false;
      const candidates: Array<{ v: Workload; q: Queue }> = [];
      for (const v of running.preemptibleOf(poolName, w.project))
        if (v.priority < w.priority && this.isVictimIn(v, poolName)) candidates.push({ v, q: queue });
      if (candidates.length === 0) continue;
      const chosen = this.pickVictims(pool, job.shapes[i], candidates, () => true);
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
      if (chosen.victims.length > 0) this.acted = true;
      this.pipelineOrBind(w, pool, chosen);
      return true;
    }
    const failure: CycleAttempt = {
      workload: w,
      queue: job.preferred,
      outcome: overQuota ? "over-quota" : "no-strategy",
      victims: NO_VICTIMS,
    };
    job.preemptFailure = { reasons: job.reasons, versions: job.pools.map((pool) => this.poolVersion(pool, running)), failure };
    this.trace.preempt.push(failure);
    return false;
  }

  /** Adds eligible victims in order until the workload fits; keeps only those whose GPUs it uses. */
  private pickVictims<C extends { v: Workload; q: Queue }>(
    pool: Pool,
    shape: PodShape | undefined,
    candidates: readonly C[],
    eligible: (candidate: C) => boolean,
  ): { victims: Workload[]; pods: PodAssignment[] } | undefined {
    if (shape === undefined) return undefined;
    const freed: FreedGpus = { gpus: new Set(), perNode: new Map() };
    const victims: Workload[] = [];
    for (const candidate of candidates) {
      if (!eligible(candidate)) continue;
      victims.push(candidate.v);
      for (const pod of candidate.v.pods)
        for (const gpu of pod.gpus) {
          if (!isAllocatable(gpu) || freed.gpus.has(gpu)) continue;
          freed.gpus.add(gpu);
          freed.perNode.set(gpu.node, (freed.perNode.get(gpu.node) ?? 0) + 1);
        }
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
  private readonly failed = new Map<unknown, ScopeFailures>();
  /** The scopes written since the last clearing. */
  private readonly written: ScopeFailures[] = [];

  /** Forgets every failure (a new cycle), keeping the scopes' lists. */
  cleared(): this {
    for (const scope of this.written) scope.size = 0;
    this.written.length = 0;
    return this;
  }

  /** The failed job this one is no easier than, if any. */
  notEasierThan(job: JobPlan, scope: unknown): Workload | undefined {
    const w = job.w;
    const failed = this.failed.get(scope)?.get(job.signature);
    if (failed === undefined) return undefined;
    const pods = w.pendingPods.length;
    const failedPods = failed.pendingPods.length;
    const easier = failedPods > pods || w.gpus / Math.max(1, pods) < failed.gpus / Math.max(1, failedPods);
    return easier ? undefined : failed;
  }

  record(job: JobPlan, scope: unknown): void {
    let failures = this.failed.get(scope);
    if (failures === undefined) {
      failures = new ScopeFailures();
      this.failed.set(scope, failures);
    }
    if (failures.size === 0) this.written.push(failures);
    failures.set(job.signature, job.w);
  }
}

/**
 * One scope's failed job per signature, as parallel lists searched in order: a scope holds a few
 * signatures (its jobs' node pool lists), and lists are emptied at each cycle without a Map's
 * new table (Map.clear allocates one: 3 % of a month's simulation, three scopes a cycle).
 */
class ScopeFailures {
  private readonly signatures: string[] = [];
  private readonly jobs: Workload[] = [];
  /** How many entries are in use; those past it are left from earlier cycles. */
  size = 0;

  get(signature: string): Workload | undefined {
    for (let i = 0; i < this.size; i++) if (this.signatures[i] === signature) return this.jobs[i];
    return undefined;
  }

  set(signature: string, job: Workload): void {
    let i = 0;
    while (i < this.size && this.signatures[i] !== signature) i++;
    this.signatures[i] = signature;
    this.jobs[i] = job;
    if (i === this.size) this.size++;
  }
}

/**
 * What allocate reads of a job's pools and queues that can move: per pool its free version
 * (placement, the nodes that fit a pod) and, for the job's queue and its departments, the
 * allocation and non-preemptible allocation capacity_policy weighs (limits and quotas are the
 * blueprint's).
 */
function allocateInputsOf(job: JobPlan): number[] {
  const inputs: number[] = [];
  for (let i = 0; i < job.pools.length; i++) {
    inputs.push((job.pools[i] as Pool).freeVersion);
    for (let q: Queue | null = job.queues[i] as Queue; q !== null; q = q.parent) inputs.push(q.allocated, q.allocatedNonPreemptible);
  }
  return inputs;
}

/** Whether allocateInputsOf(job) would give what the job's last failed attempt read. */
function allocateInputsHold(job: JobPlan): boolean {
  const inputs = job.allocateInputs;
  if (inputs === undefined) return false;
  let k = 0;
  for (let i = 0; i < job.pools.length; i++) {
    if (inputs[k++] !== (job.pools[i] as Pool).freeVersion) return false;
    for (let q: Queue | null = job.queues[i] as Queue; q !== null; q = q.parent)
      if (inputs[k++] !== q.allocated || inputs[k++] !== q.allocatedNonPreemptible) return false;
  }
  return true;
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

/** Whether allocate found `reason` in `pool` (an Unschedulable one: resources were the problem). */
function hasReason(reasons: readonly PendingReason[], pool: string, reason: PendingReason["reason"]): boolean {
  for (const r of reasons) if (r.nodePool === pool && r.reason === reason) return true;
  return false;
}

function overService(q: Queue): number {
  return q.allocated / Math.max(q.deserved, q.fairShare, 1);
}

/**
 * A queue as the proportion plugin divided it: its state (queueState's fields, in their order)
 * and its place in the tree, written out field by field (a spread of queueState's object cost a
 * tenth of a cycle).
 */
function queueDivision(q: Queue): QueueDivision {
  return {
    name: q.name,
    nodePool: q.pool,
    allocated: q.allocated,
    deserved: q.deserved,
    fairShare: q.fairShare,
    allocatedCpuMilli: q.allocatedCpuMilli,
    allocatedMemoryBytes: q.allocatedMemoryBytes,
    // What it requests, running and pending (queueState's fair shares of CPU and memory).
    fairShareCpuMilli: q.requestedCpuMilli,
    fairShareMemoryBytes: q.requestedMemoryBytes,
    level: q.level,
    parent: q.parent?.name ?? null,
    limit: q.limit,
    requested: q.requested,
  };
}

/**
 * queue_order's key for a queue and the job it would take next, compared in order, smaller first:
 * over its fair share, beyond its deserved quota with the job, its share with the job, then its
 * age (order). A line is in its heap at most once, so it carries its key itself, worked out again
 * before each push, and nothing is made per push.
 */
abstract class QueueKey {
  /** The queue's allocation when the key was worked out. */
  allocated = 0;
  overFairShare = 0;
  beyondDeserved = 0;
  share = 0;

  constructor(readonly queue: Queue) {}

  protected keyFor(gpus: number): void {
    const queue = this.queue;
    const allocated = queue.allocated;
    this.allocated = allocated;
    this.overFairShare = allocated > queue.fairShare ? 1 : 0;
    this.beyondDeserved = allocated + gpus > queue.deserved ? 1 : 0;
    this.share = (allocated + gpus) / Math.max(queue.deserved, queue.fairShare, 1);
  }
}

/** A project queue's jobs in allocate's order, how many of them have been tried, and its key for the next. */
class QueueLine extends QueueKey {
  readonly jobs: JobPlan[] = [];
  next = 0;
  /** The job the key was worked out for. */
  job: JobPlan | undefined;

  clear(): void {
    this.jobs.length = 0;
    this.next = 0;
    this.job = undefined;
  }

  keyedBy(job: JobPlan): this {
    this.job = job;
    this.keyFor(job.w.gpus);
    return this;
  }

  /**
   * Whether the key is still its queue's: during allocate only a queue's allocation moves (fair
   * shares and quotas are the cycle's), and every part of the key moves with it.
   */
  keyCurrent(): boolean {
    return this.queue.allocated === this.allocated;
  }
}

/**
 * A department's queues with jobs this cycle, and its key among the departments: its own figures
 * with the job its best queue would take next (job_order_by_queue.go, getBestJobFromNode).
 */
class DepartmentLine extends QueueKey {
  readonly lines = new MinHeap<QueueLine>(keyBefore);
  /** The line and job the key was worked out for. */
  private head: QueueLine | undefined;
  private headJob: JobPlan | undefined;

  keyed(): this {
    const head = this.lines.peek() as QueueLine;
    this.head = head;
    this.headJob = head.job;
    this.keyFor((head.job as JobPlan).w.gpus);
    return this;
  }

  /** Its last queue's jobs are tried: it keeps no job alive until the next cycle. */
  emptied(): void {
    this.head = undefined;
    this.headJob = undefined;
  }

  /** Whether the key is still the department's with `line` (just taken from its top, key current) next. */
  keyCurrent(line: QueueLine): boolean {
    return this.queue.allocated === this.allocated && this.head === line && this.headJob === line.job;
  }
}

function keyBefore(a: QueueKey, b: QueueKey): boolean {
  if (a.overFairShare !== b.overFairShare) return a.overFairShare < b.overFairShare;
  if (a.beyondDeserved !== b.beyondDeserved) return a.beyondDeserved < b.beyondDeserved;
  if (a.share !== b.share) return a.share < b.share;
  return a.queue.order < b.queue.order;
}

/**
 * GPUs held by victims that would be evicted, and how many of them each node has: a victim search
 * places the preemptor again after each victim it adds, and counting a node's freed GPUs by
 * looking each of its GPUs up made every placement cost nodes × GPUs per node.
 */
interface FreedGpus {
  readonly gpus: Set<Gpu>;
  readonly perNode: Map<Node, number>;
}

/**
 * Bin-packing placement (plugins/nodeplacement, binpack is KAI's default): each pod goes to
 * the node with the fewest free GPUs that still fits it; GPUs are taken lowest index first.
 * `freed` GPUs count as free (held by victims that would be evicted).
 */
function place(pool: Pool, shape: PodShape, freed?: FreedGpus): PodAssignment[] | undefined {
  // Not enough free GPUs in the whole pool: no node search can succeed.
  if (pool.schedulableFree + (freed?.gpus.size ?? 0) < shape.pods * shape.gpusPerPod) return undefined;
  if (shape.pods === 1) {
    // The common case, one pod: the first of the fullest nodes that fit, in one pass.
    let best: Node | undefined;
    let bestFree = Number.POSITIVE_INFINITY;
    for (const node of pool.nodes) {
      const free = freeOn(node, freed);
      if (free >= shape.gpusPerPod && free < bestFree) {
        best = node;
        bestFree = free;
        if (free === shape.gpusPerPod) break; // no node fits more tightly
      }
    }
    return best === undefined ? undefined : [{ node: best, gpus: gpusOn(best, shape.gpusPerPod, freed) }];
  }
  // One pod of a gang per node, each on the fullest node that fits: the candidates in order of
  // free GPUs (ties in node order, as the sort is stable) give pod 1 its node, pod 2 the next…
  const candidates: Array<{ node: Node; free: number }> = [];
  for (const node of pool.nodes) {
    const free = freeOn(node, freed);
    if (free >= shape.gpusPerPod) candidates.push({ node, free });
  }
  if (candidates.length < shape.pods) return undefined;
  candidates.sort((a, b) => a.free - b.free);
  return candidates.slice(0, shape.pods).map(({ node }) => ({ node, gpus: gpusOn(node, shape.gpusPerPod, freed) }));
}

/**
 * A node's GPUs a pod may take, with `freed` counted as free. Functions of their own, not
 * closures made at each placement: allocate places every pending job in every cycle.
 */
function freeOn(node: Node, freed: FreedGpus | undefined): number {
  const free = schedulableFreeGpus(node);
  return freed !== undefined && node.status === "ready" ? free + (freed.perNode.get(node) ?? 0) : free;
}

/** The first `count` GPUs of a node that a pod may take (lowest index first). */
function gpusOn(node: Node, count: number, freed: FreedGpus | undefined): Gpu[] {
  return node.gpus.filter((gpu) => isFree(gpu) || (freed?.gpus.has(gpu) === true && isAllocatable(gpu))).slice(0, count);
}

/** A cycle's division when the run reports none. */
