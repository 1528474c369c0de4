/**
 * All metric constructs for one simulated cluster, sharing one GPU activity model so every
 * source tells the same story: the same run gives the same samples.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import type { ClusterView, DomainEvent } from "@gpusynth/sim";
import type { LogRecordOut, MetricConstruct, MetricFamily, Placement, TargetSamples } from "./catalogue.js";
import { BLUEPRINT_CALENDAR, type StampClock } from "./clock.js";
import { DCGM_DEFAULTS, DcgmConstruct } from "./dcgm-exporter/index.js";
import { GpuActivityModel } from "./gpu/activity.js";
import { GpuTimelines } from "./gpu/timeline.js";
import { SCHEDULER_DEFAULTS, SchedulerConstruct } from "./kai-scheduler/index.js";
import { SchedulerLog } from "./kai-scheduler/logs.js";
import { KubeStateMetricsConstruct } from "./kube-state-metrics/index.js";
import { ImagePulls, imagesOf } from "./kubelet/image-pulls.js";
import { KubeletConstruct } from "./kubelet/index.js";
import { KubernetesEvents } from "./kubernetes-events/events.js";
import { NodeExporterConstruct } from "./node-exporter/index.js";
import { RunaiConstruct } from "./runai/index.js";
import type { ShardFilter } from "./shard.js";
import { systemPodOf } from "./system-workloads.js";

export class ClusterMetrics {
  private readonly kubeStateMetrics: KubeStateMetricsConstruct;
  private readonly kubelet: KubeletConstruct;
  private readonly scheduler: SchedulerConstruct;
  readonly constructs: readonly MetricConstruct[];
  /** The GPU activity every source reads; the control-plane API reads it too, so all agree. */
  readonly activity: GpuActivityModel;

  /** Records the image pulls when they are this source's own (not shared, and fed, by a ClusterRun). */
  private readonly ownPulls: ImagePulls | undefined;
  /** What ran on each GPU: fed here, after the pulls, so a container's run starts when its image is in. */
  private readonly timelines: GpuTimelines;

  /**
   * `clock` stamps the values of time-valued families (pod start and creation, last busy time);
   * `pulls` says when each container starts: shared with the kubelet's events in a ClusterRun,
   * which feeds it the simulation's events; without it, this source keeps its own.
   */
  constructor(
    blueprint: Blueprint,
    clock: StampClock = BLUEPRINT_CALENDAR,
    shared?: ImagePulls,
    /** Whether the GPUs of a node are read (a shard's own nodes, or every node where it serves Run:ai's per-GPU families). */
    gpusRead?: (node: string) => boolean,
  ) {
    this.ownPulls = shared === undefined ? new ImagePulls(imagesOf(blueprint)) : undefined;
    const pulls = shared ?? (this.ownPulls as ImagePulls);
    this.timelines = new GpuTimelines(pulls, gpusRead);
    this.activity = new GpuActivityModel(this.timelines);
    const dcgm = new DcgmConstruct(this.activity, {
      ...DCGM_DEFAULTS,
      driverVersion: blueprint.telemetry.driverVersion,
      extraCounters: blueprint.telemetry.dcgmCounters,
    });
    this.kubeStateMetrics = new KubeStateMetricsConstruct(blueprint, clock, pulls);
    this.kubelet = new KubeletConstruct(blueprint, pulls, clock);
    this.scheduler = new SchedulerConstruct({
      ...SCHEDULER_DEFAULTS,
      schedulingPeriodMs: blueprint.time.schedulingPeriod,
      schedulerHost: systemPodOf(blueprint, "kai-scheduler-default").ip,
      queueControllerHost: systemPodOf(blueprint, "queue-controller").ip,
    });
    const runai = new RunaiConstruct(blueprint, this.activity, this.kubelet.containers, clock);
    // Every source, in the order their targets are collected (and pushed, and served).
    const nodeExporter = blueprint.telemetry.nodeExporter ? [new NodeExporterConstruct(blueprint, this.kubelet.containers, clock)] : [];
    this.constructs = [runai, dcgm, this.kubeStateMetrics, this.kubelet, ...nodeExporter, this.scheduler];
  }

  /**
   * Sums every read GPU's energy up to the view's time without reading it (GpuActivityModel.settle):
   * for a stretch nobody reads, so what its containers ran is not kept for the first reading after it.
   */
  settleGpus(view: ClusterView): void {
    for (const pool of view.pools)
      for (const node of pool.nodes) {
        if (!this.timelines.reads(node.name)) continue;
        for (const gpu of node.gpus) this.activity.settle(gpu, pool.model, view.now);
      }
  }

  /** Feeds a domain event to the constructs that keep state from events; subscribe it to the simulation. */
  readonly record = (event: DomainEvent): void => {
    this.ownPulls?.record(event);
    this.timelines.record(event);
    this.kubelet.containers.record(event);
    this.scheduler.record(event);
    this.kubeStateMetrics.record(event);
  };

  /**
   * Every target's samples at the view's simulated time, or only a shard's: its nodes' exporters,
   * and the cluster-wide exporters it owns. A GPU's readings are a function of the GPU and the
   * time alone, so a shard that reads only its own GPUs reads them exactly as the whole run does.
   */
  collect(view: ClusterView, shard?: ShardFilter, sources?: ReadonlySet<string>): TargetSamples[] {
    const targets: TargetSamples[] = [];
    for (const source of this.constructs) {
      if (sources !== undefined && !sources.has(source.area)) continue;
      if (shard === undefined || ownsAny(shard, source.placement)) {
        // Appended one by one: flatMap costs 0.2 µs a target, a spread's arguments would be too many.
        for (const target of source.collect(view, shard)) targets.push(target);
      }
    }
    return targets;
  }

  /** The areas named, each checked to be one of this run's sources. */
  sourcesNamed(areas: readonly string[]): ReadonlySet<string> {
    const known = this.constructs.map((c) => c.area);
    for (const area of areas)
      if (!known.includes(area)) throw new Error(`no metric source "${area}" in this run: its sources are ${known.join(", ")}`);
    return new Set(areas);
  }

  families(): MetricFamily[] {
    return this.constructs.flatMap((c) => c.families);
  }
}

/** Which log sources a run writes. */
export interface LogSources {
  /** Kubernetes events (the collector's k8s_events receiver). */
  readonly events: boolean;
  /** The KAI scheduler's container log (filelog). */
  readonly scheduler: boolean;
}

export const ALL_LOG_SOURCES: LogSources = { events: true, scheduler: true };

/** How the log sources write: everything (default), or the scheduler's lines counted (an inventory). */
export interface LogWriting {
  /** Count the scheduler's lines instead of writing them, once a cycle is written whole (SchedulerLogOptions.tally; tallied()). */
  readonly tally?: boolean;
}

/** All log sources of one simulated cluster: Kubernetes events and the scheduler's log. */
export class ClusterLogs {
  /** Records the image pulls when they are this source's own (not shared, and fed, by a ClusterRun). */
  private readonly ownPulls: ImagePulls | undefined;
  private readonly events: KubernetesEvents;
  private readonly scheduler: SchedulerLog;

  /**
   * `clock` stamps the records: the blueprint's calendar offline, the consumers' clock live.
   * A source left out writes nothing (the scheduler's log is most of the volume).
   */
  constructor(
    blueprint: Blueprint,
    clock: StampClock = BLUEPRINT_CALENDAR,
    private readonly sources: LogSources = ALL_LOG_SOURCES,
    writing: LogWriting = {},
    /** When each container starts: shared with the metrics in a ClusterRun (which feeds it), so both agree. */
    shared?: ImagePulls,
  ) {
    this.ownPulls = shared === undefined ? new ImagePulls(imagesOf(blueprint)) : undefined;
    const pulls = shared ?? (this.ownPulls as ImagePulls);
    const period = blueprint.time.schedulingPeriod;
    const nodes = new Map(blueprint.nodePools.map((p) => [p.name, p.nodes]));
    this.events = new KubernetesEvents(blueprint.time.start, period, (pool) => nodes.get(pool) ?? 0, clock, imagesOf(blueprint), pulls);
    const pod = systemPodOf(blueprint, "kai-scheduler-default");
    this.scheduler = new SchedulerLog(blueprint.time.start, clock, {
      pod: {
        namespace: pod.workload.namespace,
        name: pod.name,
        uid: pod.uid,
        container: pod.workload.containers[0]?.name ?? pod.workload.name,
      },
      verbosity: blueprint.telemetry.schedulerVerbosity,
      schedulingPeriodMs: period,
      ...(writing.tally === undefined ? {} : { tally: writing.tally }),
    });
  }

  /** Feeds a domain event; subscribe it to the simulation. */
  readonly record = (event: DomainEvent): void => {
    // The pulls first: the kubelet's events for a container start read when it starts.
    this.ownPulls?.record(event);
    if (this.sources.events) this.events.record(event);
    if (this.sources.scheduler) this.scheduler.record(event);
  };

  /** Drops every record up to the view's simulated time (a warm-up), writing no scheduler lines for it. */
  skip(view: ClusterView): void {
    this.events.drain(view.startMs + view.now);
    this.scheduler.skip(view.now);
  }

  /** Scheduler log lines counted but not written since the last call (LogWriting.tally). */
  tallied(): number {
    return this.scheduler.tallied();
  }

  /** Every record written up to the view's simulated time, oldest first. */
  drain(view: ClusterView): LogRecordOut[] {
    const events = this.sources.events ? this.events.drain(view.startMs + view.now) : [];
    const scheduler = this.sources.scheduler ? this.scheduler.drain(view.now) : [];
    return byTime(events, scheduler);
  }
}

/**
 * Two sources' records in one list by time, as a stable sort of the two one after the other gives
 * them (ties: `first`'s before `second`'s, each in its own order). Each source writes its records
 * oldest first, so they are merged in one pass; a list that is not in order (a scheduling cycle
 * running past the next one's start) is sorted.
 */
function byTime(first: readonly LogRecordOut[], second: readonly LogRecordOut[]): LogRecordOut[] {
  if (!inTimeOrder(first) || !inTimeOrder(second)) return [...first, ...second].sort((a, b) => a.timeMs - b.timeMs);
  const merged = new Array<LogRecordOut>(first.length + second.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < first.length && j < second.length) {
    const a = first[i] as LogRecordOut;
    const b = second[j] as LogRecordOut;
    if (b.timeMs < a.timeMs) {
      merged[k++] = b;
      j++;
    } else {
      merged[k++] = a;
      i++;
    }
  }
  while (i < first.length) merged[k++] = first[i++] as LogRecordOut;
  while (j < second.length) merged[k++] = second[j++] as LogRecordOut;
  return merged;
}

function inTimeOrder(records: readonly LogRecordOut[]): boolean {
  for (let i = 1; i < records.length; i++) if ((records[i] as LogRecordOut).timeMs < (records[i - 1] as LogRecordOut).timeMs) return false;
  return true;
}

/** Whether a shard owns one of a cluster-wide source's instances (Placement's ranks). */
function ownsAny(shard: ShardFilter, placement: Placement): boolean {
  if ("perNode" in placement) return true;
  const { clusterWide, instances = 1 } = placement;
  for (let i = 0; i < instances; i++) if (shard.ownsClusterWide(clusterWide + i)) return true;
  return false;
}
