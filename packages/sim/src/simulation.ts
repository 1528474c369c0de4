/**
 * The simulation: a virtual clock, an agenda of future happenings, the world's state and the
 * rules that move it. Pure and deterministic: it reads nothing but the blueprint, writes
 * nothing but domain events to its listeners, and knows no metric or log names.
 */
import {
  type Blueprint,
  BUILT_IN_PRIORITY_CLASSES,
  devicePluginIgnores,
  type Ending,
  isPreemptible,
  nodeMemoryBytes,
  podShape,
  powerCapPace,
  type Submission,
  type WorkloadType,
  XID_CATALOGUE,
  type XidEffect,
} from "@gpusynth/blueprint";
import { ArrivalProcess, usersOf } from "./arrivals.js";
import {
  type CycleAttemptRef,
  type DomainEvent,
  type FailureCause,
  type PendingReason,
  type PodPlacement,
  podPlacements,
  type QueueState,
  queueState,
  workloadRef,
} from "./domain-events.js";
import { EventQueue } from "./event-queue.js";
import { PendingWorkloads } from "./pending-workloads.js";
import { Rng } from "./rng.js";
import { RunningWorkloads } from "./running-workloads.js";
import { type CycleTrace, type PodAssignment, Scheduler } from "./scheduler.js";
import { terminationMs } from "./termination.js";
import { type SimulatedMs, simulatedMs } from "./time.js";
import {
  buildPools,
  buildQueues,
  EVICTION_HARD_MEMORY_BYTES,
  type FinishedPod,
  type Gpu,
  type Node,
  type Pod,
  type PodIdentity,
  type Pool,
  powerCapAt,
  projectNamespace,
  type Queue,
  releaseGpu,
  reserveGpu,
  setGpuHealth,
  setNodeStatus,
  setPluginHealth,
  takeGpu,
  unreserveGpu,
  type Workload,
} from "./world.js";

const DAY_MS = 86_400_000;

type Happening =
  | { readonly kind: "arrival"; readonly process: ArrivalProcess }
  | { readonly kind: "submission"; readonly submission: Submission }
  | { readonly kind: "cycle" }
  | { readonly kind: "end"; readonly workload: Workload; readonly token: number }
  | { readonly kind: "restart"; readonly workload: Workload; readonly token: number }
  | { readonly kind: "patience"; readonly workload: Workload }
  | { readonly kind: "fault"; readonly gpu: Gpu; readonly xid: number; readonly source: "hazard" | "injection"; readonly category?: string }
  | { readonly kind: "hazard" }
  | { readonly kind: "gpu-reset-done"; readonly gpu: Gpu }
  | { readonly kind: "node-reboot"; readonly node: Node }
  | { readonly kind: "node-ready"; readonly node: Node }
  | { readonly kind: "device-plugin-registered"; readonly node: Node; readonly bootedAt: number }
  | { readonly kind: "memory-pressure"; readonly node: Node }
  | { readonly kind: "memory-pressure-over"; readonly node: Node }
  | { readonly kind: "terminated"; readonly workload: Workload; readonly token: number }
  | { readonly kind: "pipeline-over"; readonly workload: Workload }
  | { readonly kind: "stale-gang-due" }
  /** A GPU's enforced power limit changes (faults.powerCaps: one at each end of a cap). */
  | { readonly kind: "power-cap"; readonly gpu: Gpu };

/**
 * KAI's default staleness grace period: a gang short of its minimum for this long is evicted
 * (cmd/scheduler/app/options/options.go: defaultStalenessGracePeriod, v0.13.0).
 */
export const STALENESS_GRACE_PERIOD_MS = 60_000;

export type EventListener = (event: DomainEvent) => void;

/** Read-only all the way down: what later layers may look at but never change. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** A read-only view of the cluster at the current simulated time (live objects, not copies). */
export interface ClusterView {
  readonly now: SimulatedMs;
  readonly startMs: number;
  readonly pools: readonly DeepReadonly<Pool>[];
  readonly queues: readonly DeepReadonly<Queue>[];
  readonly pending: readonly DeepReadonly<Workload>[];
  readonly running: readonly DeepReadonly<Workload>[];
  /** Terminated pods not yet deleted (Succeeded or Failed), oldest first. */
  readonly finishedPods: readonly DeepReadonly<FinishedPod>[];
}

export interface SimulationOptions {
  /** Overrides the blueprint's seed. */
  readonly seed?: number;
}

export class Simulation {
  private nowMs = 0;
  private readonly agenda = new EventQueue<Happening>();
  private readonly listeners: EventListener[] = [];
  private readonly pools: Pool[];
  private readonly queues: Queue[];
  private readonly scheduler: Scheduler;
  private readonly pending = new PendingWorkloads();
  private readonly running = new RunningWorkloads();
  private readonly ids: Rng;
  private readonly faultRng: Rng;
  /** How evicted pods terminate (termination.ts): each workload's way, drawn at its first eviction, and each eviction's time. */
  private readonly terminationRng: Rng;
  private readonly sigtermDraws = new WeakMap<Workload, number>();
  /** When a restarted node's device plugin registers (devicePluginRegistrationMs). */
  private readonly devicePluginRng: Rng;
  private readonly priorities: Map<string, number>;
  private readonly sequence = new Map<string, number>();
  /** Terminated pods still in the API, oldest first, until finishedPodRetention has passed. */
  private finishedPods: FinishedPod[] = [];
  /**
   * Gangs that lost a rank: their minimum (every rank), the first rank's failure, the GPUs of the
   * failed ranks (already out of its queues' allocation), and when KAI first saw the gang short
   * (its PodGroup's staleness timestamp; null until a cycle has seen it).
   */
  private readonly staleGangs = new Map<
    Workload,
    { since: number | null; readonly minMember: number; readonly cause: FailureCause; lostGpus: number }
  >();
  /** The gangs the cycle running now evicts (its StaleGangEviction action). */
  private staleGangsEvicted: Workload[] = [];
  private cycleQueued = false;
  /** Whether the device plugin ignores an XID (its skip list and DP_DISABLE_HEALTHCHECKS). */
  private readonly pluginIgnores: (xid: number) => boolean;
  /** Each pending workload's last failed attempt per action, reused while the result repeats. */
  /** The pending reasons last reported per workload, to report only changes (forgotten at a start). */
  private readonly reportedReasons = new WeakMap<Workload, readonly PendingReason[]>();
  private nextWorkloadId = 1;

  constructor(
    readonly blueprint: Blueprint,
    options: SimulationOptions = {},
  ) {
    const root = new Rng(options.seed ?? blueprint.seed);
    this.pools = buildPools(blueprint, root.fork("hardware"));
    this.queues = buildQueues(blueprint);
    this.ids = root.fork("identifiers");
    this.faultRng = root.fork("faults");
    this.terminationRng = root.fork("termination");
    this.devicePluginRng = root.fork("device-plugin");
    this.pluginIgnores = devicePluginIgnores(blueprint.faults.devicePluginDisableHealthchecks);
    this.priorities = new Map([...BUILT_IN_PRIORITY_CLASSES, ...blueprint.priorityClasses].map((c) => [c.name, c.value]));
    this.scheduler = new Scheduler(this.pools, this.queues, {
      bind: (w, pool, pods) => this.bind(w, pool, pods),
      evict: (victim, action, preemptor) => this.evict(victim, action, preemptor),
      pipeline: (w, pool, pods) => this.pipeline(w, pool, pods),
      unschedulable: (w, reasons) => this.unschedulable(w, reasons),
      traced: (trace) => this.emitCycle(trace),
    });

    for (const generator of blueprint.workloads) {
      const process = new ArrivalProcess(
        generator,
        usersOf(blueprint, generator.project),
        blueprint.time.start,
        blueprint.time.utcOffsetHours,
        root,
      );
      const first = process.nextArrival(0);
      if (first !== undefined) this.agenda.push(first, { kind: "arrival", process });
    }
    for (const submission of blueprint.submissions) this.agenda.push(submission.at, { kind: "submission", submission });
    const nodes = new Map(this.pools.flatMap((pool) => pool.nodes.map((node) => [node.name, node] as const)));
    for (const injection of blueprint.faults.injections) {
      const gpu = nodes.get(injection.node)?.gpus[injection.gpu];
      if (gpu !== undefined) this.agenda.push(injection.at, { kind: "fault", gpu, xid: injection.xid, source: "injection" });
    }
    for (const pressure of blueprint.faults.memoryPressure) {
      const node = nodes.get(pressure.node);
      if (node !== undefined) this.agenda.push(pressure.at, { kind: "memory-pressure", node });
    }
    for (const cap of blueprint.faults.powerCaps) {
      const gpu = nodes.get(cap.node)?.gpus[cap.gpu];
      if (gpu === undefined) continue;
      this.agenda.push(cap.at, { kind: "power-cap", gpu });
      this.agenda.push(cap.at + cap.for, { kind: "power-cap", gpu });
    }
    this.scheduleHazard();
    // The scheduler's loop starts with the cluster: its first cycle runs whether or not
    // anything is pending, and its log and metrics describe the cluster from then on.
    this.requestCycle();
  }

  get now(): number {
    return this.nowMs;
  }

  /** How many workloads wait to be scheduled (without the copy a view makes: a progress line's count). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Subscribes to domain events; returns a function that unsubscribes. */
  onEvent(listener: EventListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Advances the virtual clock to `t` (ms since start), running everything due until then. */
  runUntil(t: number): void {
    for (;;) {
      const next = this.agenda.peekTime();
      if (next === undefined || next > t) break;
      const { time, item } = this.agenda.pop() as { time: number; item: Happening };
      this.nowMs = time;
      this.handle(item);
    }
    this.nowMs = Math.max(this.nowMs, t);
  }

  view(): ClusterView {
    this.deleteExpiredPods();
    return {
      finishedPods: this.finishedPods,
      now: simulatedMs(this.nowMs),
      startMs: this.blueprint.time.start,
      pools: this.pools,
      queues: this.queues,
      pending: [...this.pending],
      running: [...this.running],
    };
  }

  /** Finished pods older than the retention are deleted from the API. */
  private deleteExpiredPods(): void {
    const retention = this.blueprint.time.finishedPodRetention;
    const keepFrom = this.finishedPods.findIndex((pod) => this.nowMs - pod.finishedAt <= retention);
    if (keepFrom !== 0) this.finishedPods = keepFrom < 0 ? [] : this.finishedPods.slice(keepFrom);
  }

  private emit(event: DomainEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private handle(item: Happening): void {
    switch (item.kind) {
      case "arrival":
        this.arrive(item.process);
        return;
      case "submission": {
        const sub = item.submission;
        this.submit({ ...sub, generator: "", user: sub.user ?? (this.projectOf(sub.project).users[0] as string), runMs: sub.runFor });
        return;
      }
      case "cycle": {
        this.cycleQueued = false;
        // StaleGangEviction is the cycle's last action: what it evicts is in the cycle's trace,
        // and goes once the other actions are done.
        this.staleGangsEvicted = this.staleGangsDue();
        this.scheduler.cycle(this.pending.inJobOrder(), this.running);
        const evicted = this.staleGangsEvicted;
        this.staleGangsEvicted = [];
        for (const w of evicted) this.evictStaleGang(w);
        return;
      }
      case "stale-gang-due":
        this.requestCycle();
        return;
      case "power-cap":
        this.powerCapChanged(item.gpu);
        return;
      case "end": {
        const w = item.workload;
        if (w.endToken !== item.token || w.phase !== "Running") return;
        if ((w.ending === "fail" || w.ending === "oom") && w.restartPolicy === "OnFailure") this.crash(w);
        else this.finish(w);
        return;
      }
      case "restart":
        if (item.workload.endToken === item.token && item.workload.phase === "Running") this.restart(item.workload);
        return;
      case "patience":
        // Its user gives up on a workload that has not started; one back in the queue after a
        // preemption has started, and waits on.
        if (item.workload.phase === "Pending" && item.workload.firstStartedAt === null) this.cancelPending(item.workload);
        return;
      case "fault":
        this.fault(item.gpu, item.xid, item.source, item.category);
        return;
      case "hazard":
        this.hazard();
        return;
      case "gpu-reset-done":
        setGpuHealth(item.gpu, "ok");
        item.gpu.initialisedAt = this.nowMs;
        this.emit({ t: this.nowMs, kind: "GpuResetCompleted", node: item.gpu.node.name, gpu: gpuRef(item.gpu) });
        this.requestCycle();
        return;
      case "node-reboot":
        this.rebootNode(item.node);
        return;
      case "memory-pressure":
        this.memoryPressure(item.node);
        return;
      case "memory-pressure-over":
        if (item.node.memoryPressureUntil !== null && this.nowMs >= item.node.memoryPressureUntil) {
          item.node.memoryPressureUntil = null;
          this.emit({ t: this.nowMs, kind: "NodeMemoryPressureRelieved", node: item.node.name });
        }
        return;
      case "terminated":
        if (item.workload.endToken === item.token && item.workload.terminatingUntil !== null) this.terminated(item.workload);
        return;
      case "pipeline-over":
        if (item.workload.pipelinedUntil !== null) {
          item.workload.pipelinedUntil = null;
          for (const gpu of item.workload.reservedGpus) unreserveGpu(gpu);
          item.workload.reservedGpus = [];
          this.requestCycle();
        }
        return;
      case "node-ready":
        for (const gpu of item.node.gpus) {
          setGpuHealth(gpu, "ok");
          // No GPU is advertised until the device plugin, restarted with the node, registers.
          setPluginHealth(gpu, false);
          gpu.lastXid = 0; // the driver reloaded: DCGM's last-XID field starts over
          gpu.initialisedAt = this.nowMs;
        }
        item.node.devicePluginRegistered = false;
        setNodeStatus(item.node, "ready");
        item.node.bootedAt = this.nowMs;
        this.emit({ t: this.nowMs, kind: "NodeReady", node: item.node.name });
        this.agenda.push(this.nowMs + devicePluginRegistrationMs(this.devicePluginRng), {
          kind: "device-plugin-registered",
          node: item.node,
          bootedAt: this.nowMs,
        });
        this.requestCycle();
        return;
      case "device-plugin-registered":
        // A cordon does not stop the plugin; a reboot in between starts it again (that boot's own item).
        if (item.node.bootedAt !== item.bootedAt || item.node.status === "rebooting" || item.node.devicePluginRegistered) return;
        item.node.devicePluginRegistered = true;
        for (const gpu of item.node.gpus) setPluginHealth(gpu, true);
        this.requestCycle();
        return;
    }
  }

  /** Scheduling runs at the next period boundary after anything changed (KAI's 1 s loop, minus idle cycles). */
  private requestCycle(): void {
    if (this.cycleQueued) return;
    this.cycleQueued = true;
    const period = this.blueprint.time.schedulingPeriod;
    this.agenda.push((Math.floor(this.nowMs / period) + 1) * period, { kind: "cycle" });
  }

  /** The pods a workload's controller creates for it, shaped for its preferred node pool. */
  private createPods(w: Workload): PodIdentity[] {
    const pool = this.pools.find((p) => p.name === w.nodePools[0]);
    const count = pool === undefined ? 1 : (podShape(w.type, w.gpus, pool.spec)?.pods ?? 1);
    return Array.from({ length: count }, (_, i) => ({ name: podName(w, i), uid: this.ids.uuid(), createdAt: this.nowMs }));
  }

  private projectOf(name: string) {
    const project = this.blueprint.projects.find((p) => p.name === name);
    if (project === undefined) throw new Error(`unknown project ${name} (validation should have caught it)`);
    return project;
  }

  /** A generator's next arrival: draw the workload, submit it, and schedule the one after. */
  private arrive(process: ArrivalProcess): void {
    const generator = process.generator;
    const draw = process.draw();
    const n = (this.sequence.get(generator.name) ?? 0) + 1;
    this.sequence.set(generator.name, n);
    this.submit({
      name: `${generator.name}-${n}`,
      generator: generator.name,
      project: generator.project,
      user: draw.user,
      type: draw.kind.type,
      priorityClass: draw.kind.priorityClass,
      gpus: draw.gpus,
      image: draw.kind.image,
      nodePools: draw.kind.nodePools ?? generator.nodePools,
      runMs: draw.runMs,
      ending: draw.ending,
      pendingPatience: draw.kind.pendingPatience,
      restartPolicy: draw.kind.restartPolicy,
      backoffLimit: draw.kind.backoffLimit,
      cpuPerGpu: draw.kind.cpuPerGpu,
      memoryGiBPerGpu: draw.kind.memoryGiBPerGpu,
    });
    const next = process.nextArrival(this.nowMs);
    if (next !== undefined) this.agenda.push(next, { kind: "arrival", process });
  }

  private submit(spec: {
    name: string;
    generator: string;
    project: string;
    user: string;
    type: WorkloadType;
    priorityClass: string;
    gpus: number;
    image?: string | undefined;
    nodePools?: readonly string[] | undefined;
    runMs: number;
    ending: Ending;
    pendingPatience?: number | undefined;
    restartPolicy: "Never" | "OnFailure";
    backoffLimit: number;
    cpuPerGpu?: number | undefined;
    memoryGiBPerGpu?: number | undefined;
    memoryLimitGiB?: number | undefined;
    cpuLimitPerGpu?: number | undefined;
    dataLoaderCpuPerGpu?: number | undefined;
  }): void {
    const defaults = this.blueprint.limitRange;
    const project = this.projectOf(spec.project);
    const priority = this.priorities.get(spec.priorityClass) as number;
    const workload: Workload = {
      id: this.nextWorkloadId++,
      uid: this.ids.uuid(),
      name: spec.name,
      // Run:ai projects are namespaces named runai-<project> (run-ai/docs @04d09c30 docs/developer/k8s-api/launch-job-via-yaml.md).
      namespace: projectNamespace(project.name),
      project: project.name,
      department: project.department,
      user: spec.user,
      generator: spec.generator,
      type: spec.type,
      priorityClass: spec.priorityClass,
      priority,
      preemptible: isPreemptible(priority),
      gpus: spec.gpus,
      cpuMilliPerGpu: Math.round((spec.cpuPerGpu ?? defaults.cpuDefaultRequestGpuFactor) * 1000),
      memoryBytesPerGpu: Math.round(
        spec.memoryGiBPerGpu === undefined ? defaults.memoryDefaultRequestGpuFactorMiB * 2 ** 20 : spec.memoryGiBPerGpu * 2 ** 30,
      ),
      memoryLimitBytes: spec.memoryLimitGiB === undefined ? undefined : Math.round(spec.memoryLimitGiB * 2 ** 30),
      cpuLimitMilliPerGpu: spec.cpuLimitPerGpu === undefined ? undefined : Math.round(spec.cpuLimitPerGpu * 1000),
      dataLoaderMilliPerGpu: spec.dataLoaderCpuPerGpu === undefined ? undefined : Math.round(spec.dataLoaderCpuPerGpu * 1000),
      image: spec.image ?? this.blueprint.images.find((i) => i.defaultFor.includes(spec.type))?.name,
      nodePools: spec.nodePools ?? Object.keys(project.nodePools),
      submittedAt: this.nowMs,
      pendingSince: this.nowMs,
      runMs: spec.runMs,
      ending: spec.ending,
      pendingPatienceMs: spec.pendingPatience,
      restartPolicy: spec.restartPolicy,
      backoffLimit: spec.backoffLimit,
      restarts: 0,
      backoffUntil: null,
      phase: "Pending",
      pool: null,
      pods: [],
      pendingPods: [],
      attempts: 0,
      firstStartedAt: null,
      runningSince: null,
      ranMs: 0,
      endToken: 0,
      pace: 1,
      paceFrom: 0,
      paceProgressMs: 0,
      unschedulable: false,
      terminatingUntil: null,
      pipelinedUntil: null,
      reservedGpus: [],
    };
    workload.pendingPods = this.createPods(workload);
    this.pending.add(workload);
    this.emit({ t: this.nowMs, kind: "WorkloadSubmitted", workload: workloadRef(workload), nodePools: workload.nodePools });
    if (workload.pendingPatienceMs !== undefined) this.agenda.push(this.nowMs + workload.pendingPatienceMs, { kind: "patience", workload });
    this.requestCycle();
  }

  /**
   * The pods a placement of `count` pods uses: the pending ones, and new ones where the pool it
   * landed in needs more pods than its preferred pool's shape gave it.
   */
  private podIdentities(w: Workload, count: number): PodIdentity[] {
    while (w.pendingPods.length < count)
      w.pendingPods.push({ name: podName(w, w.pendingPods.length), uid: this.ids.uuid(), createdAt: this.nowMs });
    return w.pendingPods.slice(0, count);
  }

  private bind(w: Workload, pool: Pool, assignments: readonly PodAssignment[]): void {
    const identities = this.podIdentities(w, assignments.length);
    const pods: Pod[] = assignments.map((a, i) => {
      const identity = identities[i] as PodIdentity;
      // Written out, not spread from the identity: a platform's month binds millions of pods.
      const pod: Pod = {
        name: identity.name,
        uid: identity.uid,
        createdAt: identity.createdAt,
        workload: w,
        node: a.node,
        gpus: a.gpus,
        startedAt: this.nowMs,
      };
      for (const gpu of a.gpus) takeGpu(gpu, pod);
      return pod;
    });
    this.account(w, pool.name, +1);
    w.pods = pods;
    w.pendingPods = [];
    w.pool = pool.name;
    w.phase = "Running";
    w.attempts++;
    w.firstStartedAt ??= this.nowMs;
    w.runningSince = this.nowMs;
    w.unschedulable = false;
    this.reportedReasons.delete(w);
    this.pending.delete(w);
    this.running.add(w);
    this.startPace(w);
    this.agenda.push(this.nowMs + Math.round(Math.max(0, w.runMs - w.ranMs) / w.pace), { kind: "end", workload: w, token: w.endToken });
    this.emit({
      t: this.nowMs,
      kind: "WorkloadStarted",
      workload: workloadRef(w),
      nodePool: pool.name,
      pods: podPlacements(pods),
      attempt: w.attempts,
      waitedMs: this.nowMs - w.pendingSince,
    });
  }

  /**
   * Adds (+1) or removes (-1) a workload's GPUs (all of them unless said) from its project and
   * department queues.
   */
  private account(w: Workload, pool: string, sign: 1 | -1, gpus = w.gpus): void {
    const project = this.scheduler.queueOf(w, pool);
    this.scheduler.allocationMoved(project);
    for (let q: Queue | null = project; q !== null; q = q.parent) {
      q.allocated += sign * gpus;
      q.allocatedCpuMilli += sign * gpus * w.cpuMilliPerGpu;
      q.allocatedMemoryBytes += sign * gpus * w.memoryBytesPerGpu;
      q.revision++;
      if (!w.preemptible) q.allocatedNonPreemptible += sign * gpus;
    }
  }

  /** Frees a running workload's GPUs; returns where its pods were. */
  private release(
    w: Workload,
    outcome?: { phase: "Succeeded" | "Failed"; reason: "Completed" | "Error" | "OOMKilled" },
    evictedPod?: string,
  ) {
    const placements = podPlacements(w.pods);
    if (outcome !== undefined) {
      this.deleteExpiredPods();
      for (const pod of w.pods) this.finishedPods.push(this.finishedPod(w, pod, outcome, pod.name === evictedPod));
    }
    const pool = w.pool as string;
    for (const pod of w.pods) for (const gpu of pod.gpus) releaseGpu(gpu);
    // A gang's failed ranks left the allocation when they failed (failPods).
    this.account(w, pool, -1, w.gpus - (this.staleGangs.get(w)?.lostGpus ?? 0));
    this.staleGangs.delete(w);
    // A container that fails and restarts in place fails again a full run time after any start.
    const restartsFromScratch = w.ending === "fail" && w.restartPolicy === "OnFailure";
    // A preempted pod's grace period is shutdown, not progress: its run ends at the eviction.
    const stoppedAt = w.terminatingUntil === null ? this.nowMs : w.pendingSince;
    w.ranMs = restartsFromScratch ? 0 : w.ranMs + w.paceProgressMs + Math.max(0, stoppedAt - w.paceFrom) * w.pace;
    w.runningSince = null;
    w.pods = [];
    w.restarts = 0;
    w.backoffUntil = null;
    w.endToken++;
    this.running.delete(w, pool);
    this.requestCycle();
    return { placements, pool };
  }

  /**
   * KAI evicts the victim: its pods get SIGTERM and keep their GPUs, listed as running, until they
   * terminate (`terminated`: on SIGTERM or at the end of the grace period, termination.ts); only
   * then is the workload pending again with new pods from its controller.
   */
  private evict(victim: Workload, action: "reclaim" | "preempt", preemptor: Workload): void {
    // KAI compares the queues where their paths diverge: departments when they differ (unschedule_info.go).
    const pool = victim.pool as string;
    let victimQueue = this.scheduler.queueOf(victim, pool);
    let preemptorQueue = this.scheduler.queueOf(preemptor, pool);
    if (victimQueue.parent !== preemptorQueue.parent && victimQueue.parent !== null && preemptorQueue.parent !== null) {
      victimQueue = victimQueue.parent;
      preemptorQueue = preemptorQueue.parent;
    }
    const terminatesAt =
      this.nowMs + terminationMs(victim.type, this.sigtermDraw(victim), this.terminationRng, this.blueprint.time.terminationGracePeriod);
    this.emit({
      t: this.nowMs,
      kind: "WorkloadPreempted",
      workload: workloadRef(victim),
      nodePool: pool,
      pods: podPlacements(victim.pods),
      action,
      preemptor: workloadRef(preemptor),
      victimQueue: this.queueStateOf(victimQueue),
      preemptorQueue: this.queueStateOf(preemptorQueue),
      terminatesAt,
    });
    victim.terminatingUntil = terminatesAt;
    this.running.terminating(victim);
    victim.pendingSince = this.nowMs;
    victim.backoffUntil = null;
    // No end, crash or restart while it terminates.
    victim.endToken++;
    this.agenda.push(victim.terminatingUntil, { kind: "terminated", workload: victim, token: victim.endToken });
  }

  /** The victim's pods are gone: its GPUs are free and its controller's new pods wait. */
  private terminated(victim: Workload): void {
    this.release(victim);
    victim.terminatingUntil = null;
    victim.phase = "Pending";
    victim.pool = null;
    // KAI deletes the victim's pods; the workload's controller creates new ones (new UIDs).
    victim.pendingPods = this.createPods(victim);
    this.pending.add(victim);
  }

  /** The preemptor waits until its victims have terminated, then binds in the cycle after. */
  private pipeline(w: Workload, pool: Pool, assignments: readonly PodAssignment[]): void {
    // Until the last victim on its GPUs has terminated; the GPUs are its own meanwhile.
    let until = this.nowMs;
    const reserved: Gpu[] = [];
    for (const { gpus } of assignments)
      for (const gpu of gpus) {
        until = Math.max(until, gpu.holder?.workload.terminatingUntil ?? until);
        reserveGpu(gpu, w);
        reserved.push(gpu);
      }
    w.pipelinedUntil = until;
    w.reservedGpus = reserved;
    this.agenda.push(w.pipelinedUntil, { kind: "pipeline-over", workload: w });
    this.emit({
      t: this.nowMs,
      kind: "WorkloadPipelined",
      workload: workloadRef(w),
      nodePool: pool.name,
      until,
      pods: this.podIdentities(w, assignments.length).map((pod, i) => ({
        name: pod.name,
        uid: pod.uid,
        node: (assignments[i] as PodAssignment).node.name,
        gpus: (assignments[i] as PodAssignment).gpus.map(gpuRef),
      })),
    });
  }

  /** The workload's draw for whether it exits on SIGTERM (termination.ts), the same at every eviction. */
  private sigtermDraw(w: Workload): number {
    let draw = this.sigtermDraws.get(w);
    if (draw === undefined) {
      draw = this.terminationRng.float();
      this.sigtermDraws.set(w, draw);
    }
    return draw;
  }

  /** A queue's state with what its pending workloads (counted in their preferred pool) request. */
  private queueStateOf(queue: Queue): QueueState {
    let cpuMilli = 0;
    let memoryBytes = 0;
    for (const w of this.pending) {
      for (let q: Queue | null = this.scheduler.preferredQueue(w); q !== null; q = q.parent) {
        if (q !== queue) continue;
        cpuMilli += w.gpus * w.cpuMilliPerGpu;
        memoryBytes += w.gpus * w.memoryBytesPerGpu;
      }
    }
    return queueState(queue, cpuMilli, memoryBytes);
  }

  private emitCycle(trace: CycleTrace): void {
    const attempts = (list: CycleTrace["allocate"]) =>
      list.map((a): CycleAttemptRef => {
        const placed = a.outcome === "allocated" || a.outcome === "reclaimed" || a.outcome === "preempted";
        if (!placed) return this.unplacedAttempt(a);
        return attemptRef(
          a,
          podPlacements(a.workload.pods),
          a.victims.map((v) => ({ workload: workloadRef(v.workload), pods: podPlacements(v.pods) })),
          undefined,
        );
      });
    this.emit({
      t: this.nowMs,
      kind: "SchedulingCycle",
      jobs: trace.pendingJobs + this.running.size,
      pendingJobs: trace.pendingJobs,
      queues: trace.queues,
      leafQueues: trace.leafQueues,
      nodes: trace.nodes,
      notReadyNodes: trace.notReadyNodes,
      gpuShortNodes: trace.gpuShortNodes,
      allocatable: trace.allocatable,
      allocate: attempts(trace.allocate),
      consolidation: attempts(trace.consolidation),
      reclaim: attempts(trace.reclaim),
      preempt: attempts(trace.preempt),
      division: trace.division,
      divisionAfter: trace.divisionAfter,
      // Undefined, not left out, when nothing was evicted: every cycle's event then has one shape
      // (JSON leaves an undefined field out all the same).
      staleGangEviction:
        this.staleGangsEvicted.length === 0
          ? undefined
          : this.staleGangsEvicted.map((w) => ({ workload: workloadRef(w), pods: podPlacements(w.pods) })),
    });
  }

  /**
   * An attempt that placed nothing, as the same object every time its job is attempted with the
   * same outcome: a backlog's jobs fail alike cycle after cycle, and the scheduler's log keeps the
   * lines it writes for an attempt with the object.
   */
  private unplacedAttempt(a: CycleTrace["allocate"][number]): CycleAttemptRef {
    let known = this.unplacedAttempts.get(a.workload);
    if (known === undefined) {
      known = [];
      this.unplacedAttempts.set(a.workload, known);
    }
    for (const k of known) if (k.outcome === a.outcome && k.queue === a.queue && k.than === a.notEasierThan) return k.ref;
    const than = a.notEasierThan;
    const ref = attemptRef(a, [], [], than === undefined ? undefined : { namespace: than.namespace, podGroup: podGroupName(than) });
    // A few recent ones are enough (a job's attempts alternate among a handful of outcomes); a
    // skip names a different job of its signature now and then, which must not grow the list.
    known.push({ outcome: a.outcome, queue: a.queue, than, ref });
    if (known.length > 4) known.shift();
    return ref;
  }
  private readonly unplacedAttempts = new WeakMap<
    Workload,
    { readonly outcome: string; readonly queue: object; readonly than: Workload | undefined; readonly ref: CycleAttemptRef }[]
  >();

  private unschedulable(w: Workload, reasons: readonly PendingReason[]): void {
    const reported = this.reportedReasons.get(w);
    if (reported !== undefined && sameReasons(reported, reasons)) return;
    this.reportedReasons.set(w, reasons);
    w.unschedulable = true;
    this.emit({
      t: this.nowMs,
      kind: "WorkloadUnschedulable",
      workload: workloadRef(w),
      reasons,
      pods: this.pendingPodRefs(w),
    });
  }

  /**
   * A workload's pending pods as its WorkloadUnschedulable events name them, one list for as long
   * as they stay the same: a gang's reasons change whenever a node's free GPUs do (podsPlaced),
   * and listing its hundred-odd pods anew for each event was a fifteenth of a month's allocation.
   * The controller only appends to a workload's list, or gives it a new one.
   */
  private pendingPodRefs(w: Workload): readonly { readonly name: string; readonly uid: string }[] {
    const known = this.podRefs.get(w.pendingPods);
    if (known !== undefined && known.length === w.pendingPods.length) return known;
    const refs = w.pendingPods.map((p) => ({ name: p.name, uid: p.uid }));
    this.podRefs.set(w.pendingPods, refs);
    return refs;
  }
  private readonly podRefs = new WeakMap<readonly PodIdentity[], readonly { readonly name: string; readonly uid: string }[]>();

  private finish(w: Workload): void {
    const outcome = w.ending === "complete" ? SUCCEEDED : w.ending === "fail" ? FAILED : w.ending === "oom" ? OOM_KILLED : undefined;
    const { placements, pool } = this.release(w, outcome);
    const base = { t: this.nowMs, workload: workloadRef(w), nodePool: pool, pods: placements };
    if (w.ending === "complete") {
      w.phase = "Completed";
      this.emit({ ...base, kind: "WorkloadCompleted" });
    } else if (w.ending === "fail" || w.ending === "oom") {
      w.phase = "Failed";
      this.emit({ ...base, kind: "WorkloadFailed", cause: { kind: w.ending === "oom" ? "OOMKilled" : "Error" } });
    } else {
      w.phase = "Cancelled";
      this.emit({ ...base, kind: "WorkloadCancelled", whilePending: false });
    }
  }

  /**
   * restartPolicy OnFailure: the container failed. With backoffLimit restarts spent the workload
   * fails; otherwise the kubelet restarts it in place after its back-off, the GPUs still held.
   */
  private crash(w: Workload): void {
    if (w.restarts >= w.backoffLimit) {
      this.fail(w, { kind: "BackoffLimitExceeded", restarts: w.restarts });
      return;
    }
    const backoffMs = Math.min(KUBELET_BACKOFF_INITIAL_MS * 2 ** w.restarts, KUBELET_BACKOFF_MAX_MS);
    w.backoffUntil = this.nowMs + backoffMs;
    w.endToken++;
    this.agenda.push(w.backoffUntil, { kind: "restart", workload: w, token: w.endToken });
    const pool = w.pool as string;
    this.emit({
      t: this.nowMs,
      kind: "ContainerCrashed",
      workload: workloadRef(w),
      nodePool: pool,
      pods: podPlacements(w.pods),
      restarts: w.restarts,
      backoffMs,
      ...(w.ending === "oom" ? { reason: "OOMKilled" as const } : {}),
    });
  }

  /** The container runs again from scratch; the same fault recurs after the same run time. */
  private restart(w: Workload): void {
    w.restarts++;
    w.backoffUntil = null;
    w.ranMs = 0;
    w.runningSince = this.nowMs;
    this.running.reordered(w);
    this.startPace(w);
    this.agenda.push(this.nowMs + Math.round(w.runMs / w.pace), { kind: "end", workload: w, token: w.endToken });
    const pool = w.pool as string;
    this.emit({
      t: this.nowMs,
      kind: "ContainerRestarted",
      workload: workloadRef(w),
      nodePool: pool,
      pods: podPlacements(w.pods),
      restarts: w.restarts,
    });
  }

  /**
   * The kubelet's eviction manager under memory pressure (pkg/kubelet/eviction): the node reports
   * MemoryPressure until the pressure transition period has passed, and one pod is evicted —
   * ranked by memory use above its request, then priority, then use (rankMemoryPressure). Pods
   * here request no memory, so all exceed their requests; the lowest priority goes first, and
   * among equals the pod with the most memory, modelled as proportional to its GPUs. One eviction
   * is assumed to relieve the pressure.
   */
  private memoryPressure(node: Node): void {
    node.memoryPressureUntil = this.nowMs + PRESSURE_TRANSITION_MS;
    this.agenda.push(node.memoryPressureUntil, { kind: "memory-pressure-over", node });
    // A pod already terminating is not ranked: it is on its way out.
    const pods = [...this.running].flatMap((w) => (w.terminatingUntil === null ? w.pods.filter((p) => p.node === node) : []));
    pods.sort((a, b) => a.workload.priority - b.workload.priority || b.gpus.length - a.gpus.length || a.name.localeCompare(b.name));
    const victim = pods[0];
    const memoryBytes = nodeMemoryBytes(node.pool.spec);
    const kib = (bytes: number) => Math.round(bytes / 1024) * 1024;
    const usageBytes =
      victim === undefined ? 0 : kib(((memoryBytes * victim.gpus.length) / node.gpus.length) * (0.9 + 0.08 * this.faultRng.float()));
    this.emit({
      t: this.nowMs,
      kind: "NodeMemoryPressure",
      node: node.name,
      thresholdBytes: EVICTION_HARD_MEMORY_BYTES,
      availableBytes: kib(EVICTION_HARD_MEMORY_BYTES * (0.3 + 0.6 * this.faultRng.float())),
      victim:
        victim === undefined
          ? null
          : { workload: workloadRef(victim.workload), pod: podPlacements([victim])[0] as PodPlacement, usageBytes },
    });
    if (victim !== undefined) this.failPods(victim.workload, [victim], { kind: "Evicted", node: node.name, pod: victim.name });
  }

  /** A pod as the API keeps it once it has terminated (until finishedPodRetention has passed). */
  private finishedPod(w: Workload, pod: Pod, outcome: Pick<FinishedPod, "phase" | "reason">, evicted: boolean): FinishedPod {
    // Written out, not spread: a pod that ends is one of millions in a platform's month.
    const finished: FinishedPod = {
      phase: outcome.phase,
      reason: outcome.reason,
      name: pod.name,
      uid: pod.uid,
      createdAt: pod.createdAt,
      workload: w,
      node: pod.node,
      gpuCount: pod.gpus.length,
      startedAt: pod.startedAt,
      finishedAt: this.nowMs,
      restarts: w.restarts,
    };
    return evicted ? { ...finished, statusReason: "Evicted" } : finished;
  }

  /** A run starts (or starts again) at the pace its GPUs allow now. */
  private startPace(w: Workload): void {
    w.pace = this.paceOf(w);
    w.paceFrom = this.nowMs;
    w.paceProgressMs = 0;
  }

  /** Its slowest GPU's pace: a distributed job's ranks synchronise every step, so all wait on it. */
  private paceOf(w: Workload): number {
    let pace = 1;
    for (const pod of w.pods)
      for (const gpu of pod.gpus) {
        const watts = powerCapAt(gpu, this.nowMs);
        if (watts !== undefined) pace = Math.min(pace, powerCapPace(gpu.node.pool.model, watts));
      }
    return pace;
  }

  /**
   * A GPU's power limit drops or comes back: the job on it (if one runs there, not terminating,
   * not waiting on a lost rank) goes on at its new pace, its end moved to match.
   */
  private powerCapChanged(gpu: Gpu): void {
    const watts = powerCapAt(gpu, this.nowMs);
    const w = gpu.holder?.workload;
    const affected =
      w !== undefined && w.phase === "Running" && w.terminatingUntil === null && w.backoffUntil === null && !this.staleGangs.has(w);
    const pace = affected ? this.paceOf(w) : null;
    this.emit({
      t: this.nowMs,
      kind: "GpuPowerCap",
      node: gpu.node.name,
      gpu: gpuRef(gpu),
      watts: watts ?? null,
      affected: affected ? [workloadRef(w)] : [],
      pace,
    });
    if (!affected || pace === null || pace === w.pace) return;
    w.paceProgressMs += (this.nowMs - w.paceFrom) * w.pace;
    w.paceFrom = this.nowMs;
    w.pace = pace;
    w.endToken++;
    const left = Math.max(0, w.runMs - w.ranMs - w.paceProgressMs);
    // Whole milliseconds, as every time in the simulation.
    this.agenda.push(this.nowMs + Math.round(left / pace), { kind: "end", workload: w, token: w.endToken });
  }

  /**
   * `pods` of a running workload fail. Its last pods failing fail the workload; a gang (a
   * distributed job, whose pod group's minimum is every rank) that keeps other ranks loses these:
   * they end Failed and free their GPUs, the others run on without progress, and KAI's
   * StaleGangEviction evicts them once the gang has been short for the grace period.
   */
  private failPods(w: Workload, pods: readonly Pod[], cause: FailureCause): void {
    if (pods.length === w.pods.length) {
      this.fail(w, cause, cause.kind === "Evicted" ? cause.pod : undefined);
      return;
    }
    const pool = w.pool as string;
    let stale = this.staleGangs.get(w);
    if (stale === undefined) {
      stale = { since: null, minMember: w.pods.length, cause, lostGpus: 0 };
      this.staleGangs.set(w, stale);
    }
    this.deleteExpiredPods();
    for (const pod of pods) {
      this.finishedPods.push(this.finishedPod(w, pod, FAILED, cause.kind === "Evicted"));
      for (const gpu of pod.gpus) releaseGpu(gpu);
      this.account(w, pool, -1, pod.gpus.length);
      stale.lostGpus += pod.gpus.length;
    }
    w.pods = w.pods.filter((pod) => !pods.includes(pod));
    // No end and no restart while short of a rank: the others wait on it.
    w.endToken++;
    w.backoffUntil = null;
    for (const pod of podPlacements(pods))
      this.emit({ t: this.nowMs, kind: "RankFailed", workload: workloadRef(w), nodePool: pool, pod, cause });
    this.requestCycle();
  }

  /**
   * The gangs this cycle's StaleGangEviction evicts: those short of a rank for the grace period
   * since a cycle first saw them so (stalegangeviction.go:42-55); a gang seen short for the first
   * time is stamped now, and a cycle is asked for when its grace ends.
   */
  private staleGangsDue(): Workload[] {
    const due: Workload[] = [];
    for (const [w, stale] of this.staleGangs) {
      if (w.phase !== "Running" || w.terminatingUntil !== null) continue;
      if (stale.since === null) {
        stale.since = this.nowMs;
        this.agenda.push(this.nowMs + STALENESS_GRACE_PERIOD_MS - 1, { kind: "stale-gang-due" });
      } else if (this.nowMs - stale.since >= STALENESS_GRACE_PERIOD_MS) due.push(w);
    }
    return due;
  }

  /** KAI evicts a stale gang's remaining pods; its job fails with the cause that cost it the rank. */
  private evictStaleGang(w: Workload): void {
    const stale = this.staleGangs.get(w);
    if (stale === undefined || stale.since === null) return;
    const { minMember, cause, since } = stale;
    const { placements, pool } = this.release(w);
    w.phase = "Failed";
    this.emit({
      t: this.nowMs,
      kind: "WorkloadFailed",
      workload: workloadRef(w),
      nodePool: pool,
      pods: placements,
      cause,
      staleGang: { minMember, staleSince: since },
    });
  }

  private fail(w: Workload, cause: FailureCause, evictedPod?: string): void {
    // A container that ran out of memory ends OOMKilled, also when its restarts are spent.
    const { placements, pool } = this.release(
      w,
      w.ending === "oom" && cause.kind === "BackoffLimitExceeded" ? OOM_KILLED : FAILED,
      evictedPod,
    );
    w.phase = "Failed";
    this.emit({ t: this.nowMs, kind: "WorkloadFailed", workload: workloadRef(w), nodePool: pool, pods: placements, cause });
  }

  private cancelPending(w: Workload): void {
    this.pending.delete(w);
    w.pendingPods = [];
    w.phase = "Cancelled";
    this.emit({ t: this.nowMs, kind: "WorkloadCancelled", workload: workloadRef(w), nodePool: null, pods: [], whilePending: true });
    this.requestCycle();
  }

  /** Next background fault: a Poisson process over all GPUs at the summed hazard rate. */
  private scheduleHazard(): void {
    const perGpuDay = this.blueprint.faults.hazards.reduce((sum, h) => sum + h.perGpuDay, 0);
    const gpus = this.pools.reduce((sum, pool) => sum + pool.nodes.length * pool.spec.gpusPerNode, 0);
    const ratePerMs = (perGpuDay * gpus) / DAY_MS;
    if (ratePerMs <= 0) return;
    this.agenda.push(this.nowMs + Math.max(1, Math.round(this.faultRng.exponential(ratePerMs))), { kind: "hazard" });
  }

  private hazard(): void {
    const hazards = this.blueprint.faults.hazards;
    const hazard = hazards[this.faultRng.weightedIndex(hazards.map((h) => h.perGpuDay))];
    const pool = this.pools[this.faultRng.weightedIndex(this.pools.map((p) => p.nodes.length * p.spec.gpusPerNode))] as Pool;
    const node = this.faultRng.pick(pool.nodes);
    const gpu = this.faultRng.pick(node.gpus);
    // A GPU that is off the bus, resetting or in a rebooting node cannot fault again.
    if (hazard !== undefined) this.fault(gpu, hazard.xid, "hazard", hazard.category);
    this.scheduleHazard();
  }

  private fault(gpu: Gpu, xid: number, source: "hazard" | "injection", category?: string): void {
    if (gpu.health !== "ok" || gpu.node.status === "rebooting") return;
    const effect: XidEffect = XID_CATALOGUE.get(xid)?.effect ?? "none";
    gpu.lastXid = xid;
    if (xid === XID_ROW_REMAP_EVENT) gpu.remappedRowsUncorrectable++;
    if (xid === XID_ROW_REMAP_FAILURE) gpu.rowRemapFailed = true;
    if (!this.pluginIgnores(xid)) setPluginHealth(gpu, false);
    const holder = effect === "none" ? undefined : gpu.holder?.workload;
    // A pod already terminating after a preemption just goes at once: there is nothing to fail.
    const victim = holder?.terminatingUntil === null ? holder : undefined;
    this.emit({
      t: this.nowMs,
      kind: "GpuFault",
      node: gpu.node.name,
      gpu: gpuRef(gpu),
      xid,
      effect,
      source,
      ...(category === undefined ? {} : { category }),
      affected: victim === undefined ? [] : [workloadRef(victim)],
    });
    // A single pod fails with its workload; a gang loses the rank, and KAI evicts the others.
    const cause = { kind: "GpuFault", node: gpu.node.name, gpu: gpuRef(gpu), xid } as const;
    if (victim !== undefined)
      this.failPods(
        victim,
        victim.pods.filter((pod) => pod.gpus.includes(gpu)),
        cause,
      );
    else if (holder !== undefined) this.terminated(holder);
    if (effect === "gpu-reset") {
      setGpuHealth(gpu, "resetting");
      this.emit({ t: this.nowMs, kind: "GpuResetStarted", node: gpu.node.name, gpu: gpuRef(gpu) });
      this.agenda.push(this.nowMs + this.blueprint.faults.gpuResetTime, { kind: "gpu-reset-done", gpu });
    } else if (effect === "node-reboot") {
      setGpuHealth(gpu, "off-bus");
      if (gpu.node.status === "ready") {
        setNodeStatus(gpu.node, "cordoned");
        this.emit({ t: this.nowMs, kind: "NodeCordoned", node: gpu.node.name, xid });
        this.agenda.push(this.nowMs + this.blueprint.faults.nodeRebootDelay, { kind: "node-reboot", node: gpu.node });
      }
    }
    // The next snapshot sees a node with fewer GPUs (or cordoned): a change, so a cycle runs.
    this.requestCycle();
  }

  private rebootNode(node: Node): void {
    setNodeStatus(node, "rebooting");
    const onNode = [...this.running].filter((w) => w.pods.some((pod) => pod.node === node));
    for (const w of onNode) {
      if (w.terminatingUntil !== null) this.terminated(w);
      else
        this.failPods(
          w,
          w.pods.filter((pod) => pod.node === node),
          { kind: "NodeReboot", node: node.name },
        );
    }
    this.emit({ t: this.nowMs, kind: "NodeRebootStarted", node: node.name });
    this.agenda.push(this.nowMs + this.blueprint.faults.nodeRebootTime, { kind: "node-ready", node });
  }
}

/**
 * An attempt's reference, its fields in the order every attempt lists them (notEasierThan last,
 * on skipped attempts only). Written as two literals of fixed shape, not spread from a common
 * part: a backlog's cycles make hundreds of thousands, and with spreads two days of
 * packages/sim/test/fixtures/stress.yaml (seed 12) took 2.9 s instead of 2.2 s.
 */
function attemptRef(
  a: CycleTrace["allocate"][number],
  pods: CycleAttemptRef["pods"],
  victims: CycleAttemptRef["victims"],
  notEasierThan: CycleAttemptRef["notEasierThan"],
): CycleAttemptRef {
  const workload = workloadRef(a.workload);
  const podGroup = podGroupName(a.workload);
  const { name: queue, pool: nodePool } = a.queue;
  const outcome = a.outcome;
  return notEasierThan === undefined
    ? { workload, podGroup, queue, nodePool, outcome, pods, victims }
    : { workload, podGroup, queue, nodePool, outcome, pods, victims, notEasierThan };
}

/** KAI's default pod grouper names a workload's PodGroup pg-<top owner name>-<top owner UID>. */
export function podGroupName(w: { name: string; uid: string }): string {
  return `pg-${w.name}-${w.uid}`;
}

/**
 * The row remapper's XIDs on Ampere and later (NVIDIA Xid catalogue: 63 a row marked for
 * remapping, 64 a remapping that failed); NVML counts the rows and flags the failure
 * (nvmlDeviceGetRemappedRows), which dcgm-exporter reports.
 */
const XID_ROW_REMAP_EVENT = 63;
const XID_ROW_REMAP_FAILURE = 64;

const SUCCEEDED = { phase: "Succeeded", reason: "Completed" } as const;
const FAILED = { phase: "Failed", reason: "Error" } as const;
/** The kernel's OOM killer ended the container (SIGKILL at its memory limit): the kubelet's reason OOMKilled. */
const OOM_KILLED = { phase: "Failed", reason: "OOMKilled" } as const;
/** The kubelet's container restart back-off: 10 s, doubling per restart, capped at 5 minutes (pkg/kubelet/kubelet.go backOffPeriod, MaxContainerBackOff). */
const KUBELET_BACKOFF_INITIAL_MS = 10_000;
const KUBELET_BACKOFF_MAX_MS = 300_000;
/** --eviction-pressure-transition-period default, 5 minutes (kubelet config v1beta1 defaults). */
const PRESSURE_TRANSITION_MS = 300_000;

function gpuRef(gpu: Gpu) {
  return { index: gpu.index, uuid: gpu.uuid };
}

/**
 * Pod names as the workload controllers create them: a Run:ai training or workspace pod is
 * <workload>-0-0; a distributed (PyTorchJob-style) gang has <workload>-master-0 and
 * <workload>-worker-<i>. Simplified: inference pods use the single-pod form too.
 */
function podName(w: Workload, index: number): string {
  if (w.type !== "distributed-training") return `${w.name}-0-0`;
  return index === 0 ? `${w.name}-master-0` : `${w.name}-worker-${index - 1}`;
}

/** Reasons equal field by field: the fields each reason kind carries (PendingReason). */
function sameReasons(a: readonly PendingReason[], b: readonly PendingReason[]): boolean {
  // The same list: allocate's failure was reused (its inputs held).
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as PendingReason;
    const y = b[i] as PendingReason;
    if (x.reason !== y.reason || x.nodePool !== y.nodePool || x.requested !== y.requested) return false;
    switch (x.reason) {
      case "Unschedulable":
        if (x.podsPlaced !== y.podsPlaced) return false;
        continue;
      case "OverLimit":
        if (x.queue !== y.queue || x.limit !== y.limit || x.allocated !== y.allocated) return false;
        continue;
      case "NonPreemptibleOverQuota":
        if (x.queue !== y.queue || x.deserved !== y.deserved || x.allocatedNonPreemptible !== y.allocatedNonPreemptible) return false;
        continue;
    }
  }
  return true;
}

/**
 * How long after NodeReady a node's GPUs appear: the device plugin's DaemonSet pod restarts with
 * the node's other pods and registers over the kubelet's socket, and the kubelet posts the GPUs
 * at its next node status update (every 10 s by default, KubeletConfiguration
 * nodeStatusUpdateFrequency): 5 to 20 s (a modelling choice).
 */
function devicePluginRegistrationMs(rng: Rng): number {
  return 5_000 + Math.round(rng.float() * 15_000);
}
