/**
 * The composition root of a run: one simulation and the sources that observe it — metric
 * constructs, log sources, the control plane — wired once, here. Every way of running a blueprint
 * (live, offline, dump, calibrate, report, the summary) builds a ClusterRun, advances it on its
 * own clock and reads frames from it; none wires a Simulation to its sources itself.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { type ClusterView, type DomainEvent, type SimulatedMs, Simulation, simulatedMs } from "@gpusynth/sim";
import { type LogRecordOut, type TargetSamples, targetsKept } from "./catalogue.js";
import { BLUEPRINT_CALENDAR, type StampClock } from "./clock.js";
import { ALL_LOG_SOURCES, ClusterLogs, ClusterMetrics, type LogSources, type LogWriting } from "./cluster.js";
import { ImagePulls, imagesOf } from "./kubelet/image-pulls.js";
import { RUNAI_PLACEMENT } from "./runai/index.js";
import { ControlPlane, type ControlPlaneOptions } from "./runai-api/control-plane.js";
import { type Shard, ShardFilter, WHOLE_RUN } from "./shard.js";

/** How far skipTo simulates between drops of what the logs wrote. */
const SKIP_STEP_MS = 3_600_000;

export interface ClusterRunOptions {
  /** Overrides the blueprint's seed. */
  readonly seed?: number;
  /**
   * The time axis of everything the run emits: time-valued samples, log records, the control
   * plane's history (default: the blueprint's calendar, as offline runs use).
   */
  readonly clock?: StampClock;
  /** Collect every target's samples in each frame (default: yes). */
  readonly metrics?: boolean;
  /**
   * Whether the GPUs' physics (`metrics.activity`) is read (default: yes): by the metrics and the
   * control plane where the run has them, and by a caller that reads it itself (calibration, a
   * report's timeline). A run that reads no GPU (a summary) says so, and keeps no GPU timelines:
   * the model keeps each container's time on each GPU until a reading has summed its energy,
   * about 50 MiB of heap a simulated day on platform.yaml: its 30-day summary run reached 3.2 GB.
   * With `metrics: false` too, nothing reads the metrics' model, and it does not follow the run.
   * A run that collects no metrics and keeps no control plane must say which it is.
   */
  readonly readsGpus?: boolean;
  /**
   * Collect only these sources' targets, by area ("dcgm-exporter", "runai", …): a reader of one
   * source need not pay for the others' (default: every source the blueprint deploys). The others
   * still follow the simulation, so what the named ones report is what a whole frame holds.
   */
  readonly sources?: readonly string[];
  /** Collect log records (Kubernetes events, the scheduler's log, or the sources named) in each frame (default: no). */
  readonly logs?: boolean | LogSources;
  /** How the log sources write (a tally of volume may count the scheduler's lines: Frame.talliedLogs). */
  readonly logWriting?: LogWriting;
  /** Keep the Run:ai control plane's history, observed at each frame. */
  readonly controlPlane?: Omit<ControlPlaneOptions, "clock">;
  /** Further listeners of the simulation's events (summaries, calibration, timelines), subscribed first. */
  readonly observers?: ReadonlyArray<(event: DomainEvent) => void>;
  /** Emit only this shard's targets and logs (shard.ts); default: the whole run. */
  readonly shard?: Shard;
}

/**
 * What the cluster shows at one instant: the state, every target's samples, the new log records.
 * Its samples are valid until the next frame, which sets their values again (catalogue.ts
 * TargetSeries); a consumer that keeps a frame past that keeps a copy (frameKept).
 */
export interface Frame {
  readonly simulatedMs: SimulatedMs;
  readonly view: ClusterView;
  /** Empty when the run collects no metrics. */
  readonly targets: readonly TargetSamples[];
  /** Records written since the previous frame, oldest first; empty when the run collects no logs. */
  readonly logs: readonly LogRecordOut[];
  /**
   * Scheduler log records (filelog, the same fields as its written ones) counted but not written
   * since the previous frame: only with logWriting.tally.
   */
  readonly talliedLogs: number;
}

/** The frame with its samples as they are now, to keep past the next frame (targetsKept). */
export function frameKept(frame: Frame): Frame {
  return { ...frame, targets: targetsKept(frame.targets) };
}

export class ClusterRun {
  readonly simulation: Simulation;
  readonly metrics: ClusterMetrics;
  readonly logs: ClusterLogs | undefined;
  readonly controlPlane: ControlPlane | undefined;
  readonly clock: StampClock;
  private readonly collectMetrics: boolean;
  /** Whether anything reads the metrics' model (its samples, its GPUs): else it does not follow the run. */
  private readonly metricsRead: boolean;
  /** The sources collected, where not every one (options.sources). */
  private readonly sources: ReadonlySet<string> | undefined;
  private readonly shard: ShardFilter;

  constructor(
    readonly blueprint: Blueprint,
    options: ClusterRunOptions = {},
  ) {
    const logs = options.logs ?? false;
    this.simulation = new Simulation(blueprint, options.seed === undefined ? {} : { seed: options.seed });
    for (const observer of options.observers ?? []) this.simulation.onEvent(observer);
    this.clock = options.clock ?? BLUEPRINT_CALENDAR;
    this.collectMetrics = options.metrics ?? true;
    if (options.readsGpus === false && (this.collectMetrics || options.controlPlane !== undefined))
      throw new Error("a run that collects metrics or keeps the control plane reads its GPUs: readsGpus cannot be false");
    if (!this.collectMetrics && options.controlPlane === undefined && options.readsGpus === undefined)
      throw new Error(
        "a run that collects no metrics says whether anything reads its GPUs (readsGpus): the runs kept for a reading that never comes grow by the simulated day",
      );
    // A run that collects no samples and reads no GPU (a summary) reads nothing of the metrics'
    // model: it follows the simulation only where the logs need it (image pulls). Followed anyway,
    // it was half of a 30-day summary run's time.
    this.metricsRead = options.readsGpus !== false;
    // One model of when containers start, for the metrics and the kubelet's events alike.
    const pulls = new ImagePulls(imagesOf(blueprint));
    if (this.metricsRead || logs !== false) this.simulation.onEvent(pulls.record);
    this.shard = ShardFilter.of(options.shard ?? WHOLE_RUN, this.simulation.view());
    // Run:ai's per-GPU families and the control plane read every GPU; a shard's exporters its own.
    const everyGpu = this.shard.ownsClusterWide(RUNAI_PLACEMENT.clusterWide) || options.controlPlane !== undefined;
    const gpusRead = options.readsGpus === false ? () => false : everyGpu ? undefined : (node: string) => this.shard.ownsNode(node);
    this.metrics = new ClusterMetrics(blueprint, this.clock, pulls, gpusRead);
    this.sources = options.sources === undefined ? undefined : this.metrics.sourcesNamed(options.sources);
    // The scheduler's event counters are metric state: counted whether or not frames carry samples.
    if (this.metricsRead) this.simulation.onEvent(this.metrics.record);
    this.logs =
      logs === false
        ? undefined
        : new ClusterLogs(blueprint, this.clock, logs === true ? ALL_LOG_SOURCES : logs, options.logWriting, pulls);
    if (this.logs !== undefined) this.simulation.onEvent(this.logs.record);
    this.controlPlane =
      options.controlPlane === undefined
        ? undefined
        : new ControlPlane(blueprint, this.metrics.activity, { ...options.controlPlane, clock: this.clock });
    if (this.controlPlane !== undefined) this.simulation.onEvent(this.controlPlane.record);
  }

  /** The simulated instant reached so far. */
  get now(): SimulatedMs {
    return simulatedMs(this.simulation.now);
  }

  /** Advances the simulation to the simulated instant `to`. */
  advanceTo(to: SimulatedMs): void {
    this.simulation.runUntil(to);
  }

  /**
   * Nobody reads what was simulated so far (a live run's warm-up): drops its log records, writing
   * no scheduler lines for it, and sums the GPUs' energy up to now, so what their containers ran
   * is not kept for the first reading. Called as the run goes, not once at the end: held until
   * then, a platform day's cycles and events took a live run's heap past a gigabyte, and its GPUs'
   * runs about 50 MiB more. What is dropped does not depend on how often it is called, nor does
   * anything read later (cluster-run.test.ts).
   */
  skipPast(): void {
    const view = this.simulation.view();
    this.logs?.skip(view);
    // An hour at a time: a live warm-up skips after every slice of a few simulated seconds, and
    // settling platform's 4,096 GPUs after each took its warm-up from 9 to 15 s of CPU.
    if (this.metricsRead && view.now - this.settledAt >= SKIP_STEP_MS) {
      this.metrics.settleGpus(view);
      this.settledAt = view.now;
    }
  }
  /** When skipPast last summed the GPUs' energy. */
  private settledAt = 0;

  /** Advances to `to` with nobody reading the way there (skipPast), an hour of it at a time. */
  skipTo(to: SimulatedMs): void {
    while (this.now < to) {
      this.advanceTo(simulatedMs(Math.min(to, this.now + SKIP_STEP_MS)));
      this.skipPast();
    }
  }

  /** The cluster now: collects the targets, drains the log sources and lets the control plane observe. */
  frame(): Frame {
    const view = this.simulation.view();
    // Only the shard's targets are collected (ClusterMetrics.collect says why that is exact).
    const targets = this.collectMetrics ? this.metrics.collect(view, this.shard, this.sources) : [];
    const drained = this.logs?.drain(view) ?? [];
    const tallied = this.logs?.tallied() ?? 0;
    const owned = this.shard.ownsLogs;
    this.controlPlane?.observe(view);
    return { simulatedMs: this.now, view, targets, logs: owned ? drained : [], talliedLogs: owned ? tallied : 0 };
  }
}
