/**
 * Domain events: one for every transition in the simulated cluster, carrying what later layers
 * need to tell the story (pods, nodes, GPU ids, reasons, who preempted whom and why a workload
 * cannot be placed). Events are plain JSON-serialisable data; the same blueprint and seed
 * always produce the same sequence.
 */
import type { XidEffect } from "@gpusynth/blueprint";
import type { NodeResources, Pod, Queue, Workload } from "./world.js";

/** A workload as events carry it: its identity and what it asked for, frozen at the event. */
export type WorkloadRef = Pick<
  Workload,
  | "id"
  | "uid"
  | "name"
  | "namespace"
  | "project"
  | "department"
  | "user"
  | "type"
  | "priorityClass"
  | "priority"
  | "preemptible"
  | "gpus"
  | "cpuMilliPerGpu"
  | "memoryBytesPerGpu"
  | "image"
> & {
  /** Each pod's container memory limit (bytes), when it has one. */
  readonly memoryLimitBytes?: number;
  /** Each pod's container CPU limit per GPU (millicores), when it has one. */
  readonly cpuLimitMilliPerGpu?: number;
  /** Training: the CPU its data loading needs per GPU (millicores), when the blueprint says. */
  readonly dataLoaderMilliPerGpu?: number;
  /** ending oom: its container's memory reaches the limit, and the OOM killer ends it, this long after each start (ms). */
  readonly oomAfterMs?: number;
};

export interface GpuRef {
  readonly index: number;
  readonly uuid: string;
}

export interface PodPlacement {
  readonly name: string;
  readonly uid: string;
  readonly node: string;
  readonly gpus: readonly GpuRef[];
}

/** Why a workload could not be placed in one node pool (KAI-Scheduler's reasons). */
export interface PendingReason {
  readonly nodePool: string;
  /**
   * NonPreemptibleOverQuota and OverLimit are KAI's quota reasons (pkg/scheduler/api/unschedule_info.go);
   * Unschedulable means no nodes had enough free GPUs.
   */
  readonly reason: "NonPreemptibleOverQuota" | "OverLimit" | "Unschedulable";
  /** The queue whose quota or limit blocked it (project or department). */
  readonly queue?: string;
  readonly requested: number;
  readonly deserved?: number;
  readonly limit?: number;
  readonly allocated?: number;
  readonly allocatedNonPreemptible?: number;
  /** Unschedulable gangs: how many of the gang's pods the cycle could place before one failed. */
  readonly podsPlaced?: number;
}

export interface QueueState {
  readonly name: string;
  readonly nodePool: string;
  readonly allocated: number;
  readonly deserved: number;
  readonly fairShare: number;
  /** CPU (millicores) and memory (bytes) of its running pods' requests. */
  readonly allocatedCpuMilli: number;
  readonly allocatedMemoryBytes: number;
  /**
   * Its CPU and memory fair share: what it requests (running and pending), as KAI's proportion
   * plugin divides a resource whose quota is unlimited among queues that all fit.
   */
  readonly fairShareCpuMilli: number;
  readonly fairShareMemoryBytes: number;
}

export type FailureCause =
  | { readonly kind: "Error" }
  /** The kernel's OOM killer ended the container at its memory limit. */
  | { readonly kind: "OOMKilled" }
  | { readonly kind: "GpuFault"; readonly node: string; readonly gpu: GpuRef; readonly xid: number }
  | { readonly kind: "NodeReboot"; readonly node: string }
  /** The kubelet evicted the workload's pod `pod` from `node` under memory pressure. */
  | { readonly kind: "Evicted"; readonly node: string; readonly pod: string }
  /** restartPolicy OnFailure: the container failed again with backoffLimit restarts spent. */
  | { readonly kind: "BackoffLimitExceeded"; readonly restarts: number };

interface Base {
  /** Simulated milliseconds since the blueprint's start time. */
  readonly t: number;
}

export type DomainEvent =
  | (Base & { readonly kind: "WorkloadSubmitted"; readonly workload: WorkloadRef; readonly nodePools: readonly string[] })
  | (Base & {
      readonly kind: "WorkloadUnschedulable";
      readonly workload: WorkloadRef;
      readonly reasons: readonly PendingReason[];
      /** The workload's pods waiting to be scheduled. */
      readonly pods: ReadonlyArray<{ readonly name: string; readonly uid: string }>;
    })
  | (Base & {
      readonly kind: "WorkloadStarted";
      readonly workload: WorkloadRef;
      readonly nodePool: string;
      readonly pods: readonly PodPlacement[];
      readonly attempt: number;
      /** Time since submission (first attempt) or since preemption (later attempts). */
      readonly waitedMs: number;
    })
  | (Base & {
      readonly kind: "WorkloadPreempted";
      readonly workload: WorkloadRef;
      readonly nodePool: string;
      readonly pods: readonly PodPlacement[];
      /** KAI action that evicted it: reclaim (across queues) or preempt (priority, same queue). */
      readonly action: "reclaim" | "preempt";
      readonly preemptor: WorkloadRef;
      readonly victimQueue: QueueState;
      readonly preemptorQueue: QueueState;
      /**
       * When its pods have terminated and its GPUs are free: at once after SIGTERM or at the end of
       * the grace period (termination.ts).
       */
      readonly terminatesAt: number;
    })
  | (Base & {
      /**
       * A preemptor pipelined onto the GPUs its victims still hold while they terminate
       * (KAI's Statement.Commit): its pods bind once the victims are gone.
       */
      readonly kind: "WorkloadPipelined";
      readonly workload: WorkloadRef;
      readonly nodePool: string;
      /** The pending pods and the nodes and GPUs they are pipelined to. */
      readonly pods: readonly PodPlacement[];
      /** When its victims have terminated: allocate pipelines it again every cycle until then. */
      readonly until: number;
    })
  | (Base & {
      readonly kind: "WorkloadCompleted";
      readonly workload: WorkloadRef;
      readonly nodePool: string;
      readonly pods: readonly PodPlacement[];
    })
  | (Base & {
      readonly kind: "WorkloadFailed";
      readonly workload: WorkloadRef;
      readonly nodePool: string;
      readonly pods: readonly PodPlacement[];
      readonly cause: FailureCause;
      /**
       * A gang that lost a rank (RankFailed) and stayed short of its minimum for KAI's staleness
       * grace period: KAI's StaleGangEviction action evicted its remaining `pods`
       * (stalegangeviction.go:80); `minMember` is the pod group's minimum (every rank).
       */
      readonly staleGang?: { readonly minMember: number; readonly staleSince: number };
    })
  | (Base & {
      /**
       * One rank of a gang failed (`cause`); the others run on, waiting on it, until KAI's
       * stale-gang eviction ends them (WorkloadFailed with staleGang).
       */
      readonly kind: "RankFailed";
      readonly workload: WorkloadRef;
      readonly nodePool: string;
      readonly pod: PodPlacement;
      readonly cause: FailureCause;
    })
  | (Base & {
      readonly kind: "WorkloadCancelled";
      readonly workload: WorkloadRef;
      readonly nodePool: string | null;
      readonly pods: readonly PodPlacement[];
      readonly whilePending: boolean;
    })
  | (Base & {
      readonly kind: "GpuFault";
      readonly node: string;
      readonly gpu: GpuRef;
      readonly xid: number;
      readonly effect: XidEffect;
      readonly source: "hazard" | "injection";
      readonly category?: string;
      readonly affected: readonly WorkloadRef[];
    })
  | (Base & {
      /** A container failed and waits out the kubelet's back-off before restarting in place. */
      readonly kind: "ContainerCrashed";
      readonly workload: WorkloadRef;
      readonly nodePool: string;
      readonly pods: readonly PodPlacement[];
      /** Restarts so far (restartCount before this back-off). */
      readonly restarts: number;
      readonly backoffMs: number;
      /** Why it terminated, when not an error exit: the OOM killer. */
      readonly reason?: "OOMKilled";
    })
  | (Base & {
      /** The kubelet restarted the failed container in place; restartCount is now `restarts`. */
      readonly kind: "ContainerRestarted";
      readonly workload: WorkloadRef;
      readonly nodePool: string;
      readonly pods: readonly PodPlacement[];
      readonly restarts: number;
    })
  | (Base & {
      /**
       * Host memory fell below the kubelet's hard eviction threshold: MemoryPressure, and the
       * top-ranked pod evicted (none when nothing runs there).
       */
      readonly kind: "NodeMemoryPressure";
      readonly node: string;
      readonly thresholdBytes: number;
      readonly availableBytes: number;
      readonly victim: { readonly workload: WorkloadRef; readonly pod: PodPlacement; readonly usageBytes: number } | null;
    })
  | (Base & { readonly kind: "NodeMemoryPressureRelieved"; readonly node: string })
  | (Base & { readonly kind: "GpuResetStarted" | "GpuResetCompleted"; readonly node: string; readonly gpu: GpuRef })
  | (Base & { readonly kind: "NodeCordoned"; readonly node: string; readonly xid: number })
  | (Base & {
      /** A GPU's enforced power limit drops to `watts`, or (null) comes back (faults.powerCaps). */
      readonly kind: "GpuPowerCap";
      readonly node: string;
      readonly gpu: GpuRef;
      readonly watts: number | null;
      /** The job on it, which now runs at the GPU's pace. */
      readonly affected: readonly WorkloadRef[];
      /** That job's pace from now (its slowest GPU's: 1 when none is capped), null with no job. */
      readonly pace: number | null;
    })
  | (Base & { readonly kind: "NodeRebootStarted" | "NodeReady"; readonly node: string })
  | (Base & {
      /** A scheduling cycle that ran because something changed (idle cycles in between are implied). */
      readonly kind: "SchedulingCycle";
      /** Pod groups in the cycle's snapshot: pending and running. */
      readonly jobs: number;
      readonly pendingJobs: number;
      /** All queues; leafQueues: those without children (the projects'). */
      readonly queues: number;
      readonly leafQueues: number;
      readonly nodes: number;
      readonly notReadyNodes: readonly string[];
      /**
       * Nodes whose allocatable GPUs differ from their capacity (the device plugin dropped some),
       * as their status last posted: KAI warns of each in every snapshot (node_info.go:127).
       */
      readonly gpuShortNodes: readonly NodeResources[];
      /** Allocatable CPU (millicores), memory (bytes) and GPUs of the Ready nodes. */
      readonly allocatable: { readonly cpuMilli: number; readonly memoryBytes: number; readonly gpus: number };
      readonly allocate: readonly CycleAttemptRef[];
      readonly consolidation: readonly CycleAttemptRef[];
      readonly reclaim: readonly CycleAttemptRef[];
      readonly preempt: readonly CycleAttemptRef[];
      /** Every queue's resources as the proportion plugin divided them at the cycle's start, parents before children. */
      readonly division: readonly QueueDivision[];
      /** The same after the cycle's binds and pipelinings: what the next cycle divides if nothing else changes. */
      readonly divisionAfter: readonly QueueDivision[];
      /** Gangs KAI's StaleGangEviction action evicts in this cycle, with the pods it evicts (absent: none). */
      readonly staleGangEviction?: readonly { readonly workload: WorkloadRef; readonly pods: readonly PodPlacement[] }[];
    });

/**
 * A queue as KAI's proportion plugin sees it when it opens a session: its GPU quota, limit, request
 * (allocated plus its pending jobs' GPUs, counted in their preferred pool) and the fair share it
 * divided, and the CPU and memory its running and pending pods request. One object per queue
 * while nothing of it changes, so a consumer may cache what it derives from one.
 */
export interface QueueDivision extends QueueState {
  readonly level: "department" | "project";
  /** The parent queue's name, or null for a top-level queue. */
  readonly parent: string | null;
  /** -1: no limit. */
  readonly limit: number;
  readonly requested: number;
}

/**
 * What an attempt came to. skipped: a job with the same scheduling signature already failed
 * this cycle and this one is no easier (KAI's scheduling signatures, on by default);
 * not-enough-gpus: consolidation found fewer idle GPUs than the job asks for; pipelined: a
 * preemptor whose victims still terminate, fitted onto their releasing GPUs again (allocate.go:94).
 */
export type AttemptOutcome =
  | "allocated"
  | "pipelined"
  | "unschedulable"
  | "reclaimed"
  | "preempted"
  | "no-strategy"
  | "over-quota"
  | "skipped"
  | "not-enough-gpus";

/** One scheduling attempt in a cycle, as the scheduler logs it. */
export interface CycleAttemptRef {
  readonly workload: WorkloadRef;
  readonly podGroup: string;
  readonly queue: string;
  readonly nodePool: string;
  readonly outcome: AttemptOutcome;
  /** Where the workload's pods were placed, when the attempt succeeded. */
  readonly pods: readonly PodPlacement[];
  /** Evicted workloads and where their pods were. */
  readonly victims: ReadonlyArray<{ readonly workload: WorkloadRef; readonly pods: readonly PodPlacement[] }>;
  /** A skipped attempt: the failed job of the same signature, as namespace and pod group. */
  readonly notEasierThan?: { readonly namespace: string; readonly podGroup: string };
}

export type DomainEventKind = DomainEvent["kind"];

/** A workload's reference is made of fields that never change: one object per workload, shared by its events. */
const refs = new WeakMap<Workload, WorkloadRef>();

export function workloadRef(w: Workload): WorkloadRef {
  let ref = refs.get(w);
  if (ref === undefined) {
    ref = makeRef(w);
    refs.set(w, ref);
  }
  return ref;
}

function makeRef(w: Workload): WorkloadRef {
  return {
    id: w.id,
    uid: w.uid,
    name: w.name,
    namespace: w.namespace,
    project: w.project,
    department: w.department,
    user: w.user,
    type: w.type,
    priorityClass: w.priorityClass,
    priority: w.priority,
    preemptible: w.preemptible,
    gpus: w.gpus,
    cpuMilliPerGpu: w.cpuMilliPerGpu,
    memoryBytesPerGpu: w.memoryBytesPerGpu,
    image: w.image,
    ...(w.memoryLimitBytes === undefined ? {} : { memoryLimitBytes: w.memoryLimitBytes }),
    ...(w.cpuLimitMilliPerGpu === undefined ? {} : { cpuLimitMilliPerGpu: w.cpuLimitMilliPerGpu }),
    ...(w.dataLoaderMilliPerGpu === undefined ? {} : { dataLoaderMilliPerGpu: w.dataLoaderMilliPerGpu }),
    // ending oom: the container's memory reaches its limit this long after each start.
    ...(w.ending === "oom" ? { oomAfterMs: w.runMs } : {}),
  };
}

/**
 * The share of each training step a job's GPUs wait for its data loader: none while the loader
 * gets the CPU it needs; with its CPU limit below that need, the loader runs at limit/need of the
 * speed the GPUs could take batches at, and the GPUs wait the rest.
 */
export function dataWaitShare(w: Pick<WorkloadRef, "cpuLimitMilliPerGpu" | "dataLoaderMilliPerGpu">): number {
  const { cpuLimitMilliPerGpu: limit, dataLoaderMilliPerGpu: need } = w;
  return limit === undefined || need === undefined || need <= limit ? 0 : 1 - limit / need;
}

/** The events that stop a workload's running containers (their pods' containers end with them). */
type ContainersStopped = Extract<
  DomainEvent,
  { readonly kind: "ContainerCrashed" | "WorkloadPreempted" | "WorkloadCompleted" | "WorkloadFailed" | "WorkloadCancelled" }
>;

/** Whether `event` stops the containers of its pods: a crash, or the workload's end, however it ends. */
export function stopsContainers(event: DomainEvent): event is ContainersStopped {
  switch (event.kind) {
    case "ContainerCrashed":
    case "WorkloadPreempted":
    case "WorkloadCompleted":
    case "WorkloadFailed":
    case "WorkloadCancelled":
      return true;
    default:
      return false;
  }
}

export function podPlacements(pods: readonly Pod[]): PodPlacement[] {
  return pods.map((pod) => ({
    name: pod.name,
    uid: pod.uid,
    node: pod.node.name,
    gpus: pod.gpus.map((gpu) => ({ index: gpu.index, uuid: gpu.uuid })),
  }));
}

/** A queue as an event reports it; `pendingCpuMilli` and `pendingMemoryBytes`: what its pending workloads request. */
export function queueState(queue: Queue, pendingCpuMilli: number, pendingMemoryBytes: number): QueueState {
  return {
    name: queue.name,
    nodePool: queue.pool,
    allocated: queue.allocated,
    deserved: queue.deserved,
    fairShare: queue.fairShare,
    allocatedCpuMilli: queue.allocatedCpuMilli,
    allocatedMemoryBytes: queue.allocatedMemoryBytes,
    fairShareCpuMilli: queue.allocatedCpuMilli + pendingCpuMilli,
    fairShareMemoryBytes: queue.allocatedMemoryBytes + pendingMemoryBytes,
  };
}

/**
 * Ends a switch over DomainEvent kinds whose cases list every kind: passing `event` type-checks
 * only when no kind is left, so a kind added to DomainEvent is a compile error in every fold of
 * events until that fold decides what to do with it. At run time it does nothing.
 */
export function unhandledEvent(event: never): undefined {
  void event;
  return undefined;
}

type SchedulingCycle = DomainEvent & { readonly kind: "SchedulingCycle" };

/**
 * What KAI does in each cycle after `cycle` while nothing changes (the simulation reports only the
 * cycles in which something did): the division it ended with, and the jobs still pending tried
 * again with the same outcome — except that a job that reclaimed or preempted now waits for its
 * victims, and allocate pipelines it onto their releasing GPUs every cycle until they are gone
 * (a termination ends the idle stretch). Jobs bound or pipelined by allocate are not passed on.
 */
export function idleCycleAfter(cycle: SchedulingCycle): SchedulingCycle {
  const evicting = new Set<WorkloadRef>();
  for (const a of [...cycle.reclaim, ...cycle.preempt])
    if (a.outcome === "reclaimed" || a.outcome === "preempted") evicting.add(a.workload);
  const pipelined = (a: CycleAttemptRef): CycleAttemptRef => ({ ...a, outcome: "pipelined", pods: [], victims: [] });
  // A loop, not flatMap: Node 20's flatMap costs half a microsecond a call and 0.2 µs an element, every cycle.
  const allocate: CycleAttemptRef[] = [];
  for (const a of cycle.allocate) {
    if (a.outcome === "allocated") continue;
    allocate.push(evicting.has(a.workload) && a.outcome !== "pipelined" ? pipelined(a) : a);
  }
  const stillTried = (list: readonly CycleAttemptRef[]) => list.filter((a) => !evicting.has(a.workload));
  const { staleGangEviction: _evictedOnce, ...rest } = cycle;
  return {
    ...rest,
    division: cycle.divisionAfter,
    pendingJobs: allocate.length,
    allocate,
    consolidation: stillTried(cycle.consolidation),
    reclaim: stillTried(cycle.reclaim),
    preempt: stillTried(cycle.preempt),
  };
}
