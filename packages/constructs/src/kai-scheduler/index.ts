/**
 * The scheduler construct: what KAI-Scheduler and its queue controller expose for the
 * simulated cluster. Queue gauges come from the simulation's queues (one per project or
 * department and node pool); counters accumulate from domain events (evictions, pod groups
 * scheduled per action); latencies are modelled from the cycle's work.
 */
import { type ClusterView, type CycleAttemptRef, type DomainEvent, idleCycleAfter, podGroupName, type Queue } from "@gpusynth/sim";
import { KeptLabelSets, listedTarget, type MetricConstruct, type MetricFamily, type TargetSamples, TargetSeries } from "../catalogue.js";
import { queueName } from "../naming.js";
import { stableUuid } from "../noise.js";
import { KAI_QUEUE_CONTROLLER, KAI_SCHEDULER, SCHEDULER_FAMILIES } from "./families.js";
import { actionLatencyMs, cycleJitter, cycleLatencyMs, cycleWork } from "./latency.js";

export { queueName };

export interface SchedulerOptions {
  readonly schedulerJob: string;
  readonly queueControllerJob: string;
  readonly port: number;
  /** The scheduler's and the queue controller's pod addresses (their Deployments' pods: system-workloads.ts). */
  readonly schedulerHost: string;
  readonly queueControllerHost: string;
  /** The scheduler's period: a cycle every period, also when nothing changed (blueprint time.schedulingPeriod). */
  readonly schedulingPeriodMs: number;
}

export const SCHEDULER_DEFAULTS: Omit<SchedulerOptions, "schedulerHost" | "queueControllerHost" | "schedulingPeriodMs"> = {
  // KAI v0.13.0: the scheduler Service is <schedulerName>-<shard> = kai-scheduler-default; the
  // queue controller's ServiceMonitor job is queue-controller; both listen on :8080.
  schedulerJob: "kai-scheduler-default",
  queueControllerJob: "queue-controller",
  port: 8080,
};

/** The actions KAI runs by default (conf_util/scheduler_conf_util.go). */
const ACTIONS = ["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"] as const;

/** The actions that count the pod groups they try (IncPodgroupsConsideredByAction): allocate does not. */
const TRYING_ACTIONS = ["consolidation", "reclaim", "preempt"] as const;
type TryingAction = (typeof TRYING_ACTIONS)[number];

/**
 * The pod groups an action tried in a cycle: consolidation.go:67, reclaim.go:83 and preempt.go:80
 * count a job once it is past the scheduling-signature skip, whatever the attempt comes to
 * (gpusynth traces reclaim per node pool: a job is counted once).
 */
function triedPodGroups(attempts: readonly CycleAttemptRef[]): number {
  return new Set(attempts.filter((a) => a.outcome !== "skipped").map((a) => a.podGroup)).size;
}

/** The pod groups allocate scheduled in a cycle (allocate.go:64 counts a job pipelined onto releasing GPUs as well). */
function allocatedPodGroups(cycle: DomainEvent & { kind: "SchedulingCycle" }): number {
  return cycle.allocate.filter((a) => a.outcome === "allocated" || a.outcome === "pipelined").length;
}

interface Eviction {
  readonly podgroup: string;
  readonly namespace: string;
  readonly uid: string;
  readonly nodepool: string;
  readonly action: string;
  pods: number;
}

export class SchedulerConstruct implements MetricConstruct {
  readonly area = "kai-scheduler";
  readonly families = SCHEDULER_FAMILIES;
  /** The scheduler's and the queue controller's pods, one each for the cluster. */
  readonly placement = { clusterWide: 2 } as const;
  private readonly evictions = new Map<string, Eviction>();
  /** Every series' label set, kept while its action, queue or eviction is collected. */
  private readonly kept = new KeptLabelSets();
  /** The scheduler's and the queue controller's series, kept from one scrape to the next. */
  private readonly schedulerSeries = new TargetSeries();
  private readonly controllerSeries = new TargetSeries();
  /**
   * Pod groups each action scheduled: allocate.go:64, reclaim.go:86 and preempt.go:84 count a job
   * when the action succeeds for it in a cycle (consolidation.go:69 too; consolidation moves
   * nothing here), before its pods bind or its victims are gone.
   */
  private readonly scheduledByAction = new Map<string, number>();
  /** Successful preemptions (preempt.go:83, RegisterPreemptionAttempts). */
  private preemptions = 0;
  /** Pod groups each action tried, up to the last cycle that ran. */
  private readonly actedOn = new Map<TryingAction, number>();
  /**
   * The last cycle that ran and what each idle cycle after it tries: the simulation reports cycles
   * in which something changed; in between, KAI runs a cycle every period over the same pending
   * jobs, and each tries them again.
   */
  private lastCycle:
    | { readonly t: number; readonly idleTries: ReadonlyMap<TryingAction, number>; readonly idleAllocated: number }
    | undefined;

  constructor(private readonly options: SchedulerOptions) {}

  /** Feeds a domain event; subscribe this to the simulation. */
  readonly record = (event: DomainEvent): void => {
    // Each eviction counts its pods under the evicting action (status updater's Evicted →
    // RecordPodGroupEvictedPods): reclaim and preempt, and StaleGangEviction's "stalegangeviction".
    const evicted =
      event.kind === "WorkloadPreempted"
        ? event.action
        : event.kind === "WorkloadFailed" && event.staleGang !== undefined
          ? "stalegangeviction"
          : undefined;
    if (evicted !== undefined && (event.kind === "WorkloadPreempted" || event.kind === "WorkloadFailed")) {
      const w = event.workload;
      const podgroup = podGroupName(w);
      const key = `${podgroup}\u0000${evicted}`;
      const entry = this.evictions.get(key) ?? {
        podgroup,
        namespace: w.namespace,
        uid: stableUuid(`${w.uid}/podgroup`),
        nodepool: event.nodePool,
        action: evicted,
        pods: 0,
      };
      entry.pods += event.pods.length;
      this.evictions.set(key, entry);
    }
    if (event.kind === "SchedulingCycle") {
      const count = (action: string, succeeded: number) => {
        if (succeeded > 0) this.scheduledByAction.set(action, (this.scheduledByAction.get(action) ?? 0) + succeeded);
      };
      // The idle cycles between the last one that ran and this one, then this one.
      const idleBefore = this.lastCycle === undefined ? 0 : this.cyclesAfter(this.lastCycle.t, event.t) - 1;
      count("allocate", idleBefore * (this.lastCycle?.idleAllocated ?? 0) + allocatedPodGroups(event));
      count("reclaim", event.reclaim.filter((a) => a.outcome === "reclaimed").length);
      const preempted = event.preempt.filter((a) => a.outcome === "preempted").length;
      count("preempt", preempted);
      this.preemptions += preempted;
      const idle = idleCycleAfter(event);
      const idleTries = new Map<TryingAction, number>();
      for (const action of TRYING_ACTIONS) {
        const tried = idleBefore * (this.lastCycle?.idleTries.get(action) ?? 0) + triedPodGroups(event[action]);
        if (tried > 0) this.actedOn.set(action, (this.actedOn.get(action) ?? 0) + tried);
        idleTries.set(action, triedPodGroups(idle[action]));
      }
      this.lastCycle = { t: event.t, idleTries, idleAllocated: allocatedPodGroups(idle) };
    }
  };

  /** How many cycles start after `from` up to and including `to`, a period apart. */
  private cyclesAfter(from: number, to: number): number {
    return Math.max(0, Math.floor((to - from) / this.options.schedulingPeriodMs));
  }

  collect(view: ClusterView): TargetSamples[] {
    const scheduler = this.schedulerSeries.begin();
    const controller = this.controllerSeries.begin();
    const kept = this.kept;
    kept.startCollect();
    const gauge = (out: TargetSeries, subject: string, family: MetricFamily, raw: Readonly<Record<string, string>>, value: number) =>
      kept.add(out, subject, family, raw, value);
    const counter = (out: TargetSeries, subject: string, family: MetricFamily, raw: Readonly<Record<string, string>>, value: number) =>
      out.add(family, kept.of(subject, family, raw), value, 0);
    // Modelled latencies (latency.ts); the scheduler's log drifts by the same cycle time.
    const jitter = cycleJitter(view.now);
    const work = cycleWork(view.pending.length, view.running.length);
    gauge(scheduler, "", KAI_SCHEDULER.e2eLatency, {}, cycleLatencyMs(view.pending.length, view.running.length, view.now));
    gauge(scheduler, "", KAI_SCHEDULER.openSessionLatency, {}, Math.round(1 + 0.05 * work + 2 * jitter));
    gauge(scheduler, "", KAI_SCHEDULER.closeSessionLatency, {}, Math.round(0.5 + jitter));
    for (const action of ACTIONS) {
      // Each action's own share of the cycle's work, and its own jitter: they do not move together.
      const cost = action === "allocate" ? 0.1 : 0.02;
      gauge(scheduler, `action ${action}`, KAI_SCHEDULER.actionLatency, { action }, actionLatencyMs(cost, work, action, view.now));
    }
    // A CounterVec has a series for an action only once it was incremented (WithLabelValues).
    const last = this.lastCycle;
    const idleSince = last === undefined ? 0 : this.cyclesAfter(last.t, view.now);
    for (const action of ["allocate", "reclaim", "preempt"]) {
      const idleAllocated = action === "allocate" ? idleSince * (last?.idleAllocated ?? 0) : 0;
      const count = this.scheduledByAction.get(action);
      if (count !== undefined || idleAllocated > 0)
        counter(scheduler, `action ${action}`, KAI_SCHEDULER.podGroupsScheduled, { action }, (count ?? 0) + idleAllocated);
    }
    for (const action of TRYING_ACTIONS) {
      const count = (this.actedOn.get(action) ?? 0) + idleSince * (last?.idleTries.get(action) ?? 0);
      if (count > 0) counter(scheduler, `action ${action}`, KAI_SCHEDULER.podGroupsActedOn, { action }, count);
    }
    counter(scheduler, "", KAI_SCHEDULER.totalPreemptionAttempts, {}, this.preemptions);
    for (const q of view.queues) {
      const name = queueName(q);
      gauge(scheduler, `queue ${name}`, KAI_SCHEDULER.queueFairShareGpu, { queue_name: name }, q.fairShare);
    }
    for (const [key, e] of this.evictions) {
      const labels = { podgroup: e.podgroup, namespace: e.namespace, uid: e.uid, nodepool: e.nodepool, action: e.action };
      counter(scheduler, `eviction ${key}`, KAI_SCHEDULER.evictedPods, labels, e.pods);
    }
    for (const q of view.queues as readonly Queue[]) {
      const name = `queue ${queueName(q)}`;
      const labels = { queue_name: queueName(q) };
      gauge(controller, name, KAI_QUEUE_CONTROLLER.queueInfo, labels, 1);
      gauge(controller, name, KAI_QUEUE_CONTROLLER.queueDeservedGpus, labels, q.deserved);
      // Queues carry GPU quotas only: CPU and memory quotas are unlimited, which the controller
      // reports as -1 (metrics.go unlimitedQuota); allocations are the pods' requests, rounded to
      // four decimals (roundResourceQuantity).
      gauge(controller, name, KAI_QUEUE_CONTROLLER.queueQuotaCpu, labels, UNLIMITED_QUOTA);
      gauge(controller, name, KAI_QUEUE_CONTROLLER.queueQuotaMemory, labels, UNLIMITED_QUOTA);
      gauge(controller, name, KAI_QUEUE_CONTROLLER.queueAllocatedGpus, labels, q.allocated);
      gauge(controller, name, KAI_QUEUE_CONTROLLER.queueAllocatedCpus, labels, round4(q.allocatedCpuMilli / 1000));
      gauge(controller, name, KAI_QUEUE_CONTROLLER.queueAllocatedMemory, labels, round4(q.allocatedMemoryBytes));
    }
    const { port } = this.options;
    return [
      listedTarget({ job: this.options.schedulerJob, host: this.options.schedulerHost, port, path: "/metrics" }, scheduler.end()),
      listedTarget(
        { job: this.options.queueControllerJob, host: this.options.queueControllerHost, port, path: "/metrics" },
        controller.end(),
      ),
    ];
  }
}

/** The queue controller's value for an unlimited quota (pkg/queuecontroller/metrics/metrics.go). */
const UNLIMITED_QUOTA = -1;

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
