/**
 * A live run: a warm-up is simulated first (so the first scrape shows a working cluster), then
 * the simulation is paced to the wall clock (optionally accelerated) and every interval the
 * targets are refreshed for scraping and, when a sink is given, pushed through the SDK. Every
 * time emitted is on the consumers' clock (LiveClock): the serving instant is now, simulated
 * durations are divided by the speed. Sinks only queue (delivery runs in the background), and the
 * loop yields to the event loop every few milliseconds whatever the speed, so a slow collector,
 * a busy scrape server or a huge --speed never stops the run from answering requests and signals.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { type AsyncConsumer, ClusterRun, driveAsync, LiveClock, runaiApi } from "@gpusynth/constructs";
import { type ClusterView, type SimulatedMs, simulatedMs, type UnixMs, unixMs } from "@gpusynth/sim";
import type { ControlPlaneServer } from "./api-server/server.js";
import { LogsPipeline, type LogsSink } from "./logs-pipeline.js";
import { MetricsPipeline } from "./metrics-pipeline.js";
import { advance } from "./pacing.js";
import type { RunSelection } from "./run-selection.js";
import type { ScrapeServer } from "./scrape-server.js";
import type { MetricsSink } from "./sinks.js";
import { SYSTEM_CLOCK, type WallClock } from "./wall-clock.js";
import { shardWorkers } from "./workers/shard-workers.js";

export interface LiveOptions extends RunSelection {
  /** Simulated seconds per wall-clock second. */
  readonly speed: number;
  /** Wall-clock ms between frames (a scraper's interval). */
  readonly intervalMs: number;
  /** Stop after serving this long (wall-clock ms); run until aborted when absent. */
  readonly durationMs?: number;
  /** Simulated ms run before serving starts (see servingStartMs). */
  readonly warmupMs: number;
  readonly sink?: MetricsSink;
  /** Where log records go (OTLP, console); none when absent. */
  readonly logs?: LogsSink;
  readonly server?: ScrapeServer;
  /** Serves the Run:ai control-plane API from this run, keeping `retentionMs` of history. */
  readonly api?: { readonly server: ControlPlaneServer; readonly retentionMs: number };
  readonly signal: AbortSignal;
  /** The clock the run is paced by (default: the system's; a test's ManualClock runs it without waiting). */
  readonly wallClock?: WallClock;
  readonly onTick?: (status: LiveStatus) => void;
  /**
   * Wall time the last frame of a run with a duration may simulate to reach the run's end when
   * the simulation fell behind (default half a second: the run ends on time, short of its end).
   */
  readonly lastFrameCatchUpMs?: number;
  /** During the warm-up: the simulated ms reached of how many, and the backlog. */
  readonly onWarmup?: (reachedMs: number, totalMs: number, pending: number) => void;
}

export interface LiveStatus {
  readonly simulatedMs: SimulatedMs;
  /**
   * How far the simulation is behind the wall clock (simulated ms): where --speed says it should
   * be now, less where the CPU got it. Zero while it keeps up.
   */
  readonly behindMs: number;
  /** The consumers' time that simulated instant is stamped with. */
  readonly stampedMs: UnixMs;
  readonly targets: number;
  readonly pending: number;
  readonly running: number;
}

const DAY_MS = 86_400_000;
/** Wall time the last frame of a run with --duration may simulate to reach the run's end (LiveOptions.lastFrameCatchUpMs). */
const LAST_FRAME_CATCH_UP_MS = 500;

/**
 * Where serving starts, in simulated ms since time.start: after at least `warmupMs`, and at ×1
 * at the same UTC time of day as `nowUnixMs`, so the blueprint's diurnal arrivals follow the real
 * day (the weekday is the blueprint's: aligning it could mean simulating up to a week first). A
 * cold start (no warm-up) starts at time.start, as a scenario's story needs.
 */
export function servingStartMs(blueprintStartUnixMs: number, warmupMs: number, speed: number, nowUnixMs: number): SimulatedMs {
  if (speed !== 1 || warmupMs === 0) return simulatedMs(warmupMs);
  const lag = (((nowUnixMs - (blueprintStartUnixMs + warmupMs)) % DAY_MS) + DAY_MS) % DAY_MS;
  return simulatedMs(warmupMs + lag);
}

/**
 * Waits for `work`, or until the run is aborted: undefined then (the work goes on unobserved
 * and is dropped; the workers are closed on the way out).
 */
async function untilAborted<T>(work: Promise<T> | undefined, signal: AbortSignal): Promise<T | undefined> {
  if (work === undefined || signal.aborted) return undefined;
  let onAbort = () => {};
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

export async function runLive(blueprint: Blueprint, options: LiveOptions): Promise<LiveStatus> {
  const wall = options.wallClock ?? SYSTEM_CLOCK;
  const servingMs = servingStartMs(blueprint.time.start, options.warmupMs, options.speed, wall.now());
  const clock = new LiveClock(blueprint.time.start + servingMs, options.speed, wall.now());
  const workers = shardWorkers(blueprint, options, {
    kind: "live",
    servingSimulatedUnixMs: blueprint.time.start + servingMs,
    speed: options.speed,
  });
  // With workers, this thread's run writes the logs and keeps the control plane; the workers emit the metrics.
  const run = new ClusterRun(blueprint, {
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    clock: clock.stamp,
    metrics: workers === undefined,
    // With workers and no control plane, nothing reads this thread's GPUs: it keeps none of their runs.
    readsGpus: workers === undefined || options.api !== undefined,
    logs: options.logs === undefined ? false : (options.logSources ?? true),
    ...(options.shard === undefined ? {} : { shard: options.shard }),
    // Its history is kept in stamped (wall-clock) time, like everything the run emits, one
    // snapshot per whole number of intervals so every kept snapshot is a scrape's.
    ...(options.api === undefined
      ? {}
      : {
          controlPlane: {
            retentionMs: options.api.retentionMs,
            stepMs: runaiApi.snapshotStep(options.api.retentionMs, options.intervalMs),
          },
        }),
  });
  if (run.controlPlane !== undefined) options.api?.server.attach(run.controlPlane);
  const pipeline =
    options.sink === undefined || workers !== undefined
      ? undefined
      : new MetricsPipeline(options.sink, blueprint.telemetry.serviceMonitors);
  const logsPipeline = options.logs === undefined ? undefined : new LogsPipeline(options.logs);
  const statusOf = (view: ClusterView, targets: number, wantedMs: number): LiveStatus => ({
    simulatedMs: view.now,
    behindMs: Math.max(0, wantedMs - view.now),
    stampedMs: clock.stamp(blueprint.time.start + view.now),
    targets,
    pending: view.pending.length,
    running: view.running.length,
  });
  let status = statusOf(run.simulation.view(), 0, 0);
  try {
    // The warm-up: simulated as fast as the CPU allows; its log records are nobody's news, dropped
    // slice by slice, and its GPUs' energy summed as it goes (skipPast).
    const onSlice = (reached: number) => {
      run.skipPast();
      options.onWarmup?.(reached, servingMs, run.simulation.pendingCount);
    };
    await Promise.all([
      advance(run, servingMs, options.signal, Number.POSITIVE_INFINITY, onSlice),
      untilAborted(workers?.advanceTo(servingMs), options.signal),
    ]);
    run.skipPast();
    const wallStart = wall.now();
    clock.startServing(wallStart);
    workers?.serve(unixMs(wallStart));
    // --duration is wall-clock time: the run ends then, with a last frame of what it has, whether
    // or not the simulation kept up with --speed (at a speed no CPU can follow it falls behind,
    // says by how much, and serves what it has).
    const deadline = options.durationMs === undefined ? Number.POSITIVE_INFINITY : wallStart + options.durationMs;
    const endMs = options.durationMs === undefined ? Number.POSITIVE_INFINITY : servingMs + options.durationMs * options.speed;
    let budgetMs = options.intervalMs;
    /** One instant per interval of wall time, and the last at the end: where --speed says the simulation should be then. */
    async function* paced(): AsyncGenerator<SimulatedMs> {
      for (let tick = 0; ; tick++) {
        const now = wall.now();
        // Simulating may take until the next frame is due and not past the end, but the last frame
        // (the first due at the end, even when the one before ran over it) gets a moment to catch
        // up on the rest of the run (a run that keeps up needs milliseconds).
        const last = now >= deadline;
        budgetMs = last ? (options.lastFrameCatchUpMs ?? LAST_FRAME_CATCH_UP_MS) : Math.min(options.intervalMs, deadline - now);
        yield simulatedMs(Math.min(servingMs + (now - wallStart) * options.speed, endMs));
        if (run.now >= endMs || last) return;
        // The next frame is due an interval on, or at the end if that comes first.
        await wall.sleep(Math.min(wallStart + (tick + 1) * options.intervalMs, deadline) - wall.now(), options.signal);
      }
    }
    let targets = 0;
    const publish: AsyncConsumer = {
      consume: async (frame) => {
        if (workers === undefined) {
          targets = frame.targets.length;
          options.server?.update(frame.targets);
          await pipeline?.scrape(frame.targets, unixMs(wall.now()), options.signal);
          return;
        }
        // Aborted while the workers tick: the drive ends at this step.
        const ticked = await untilAborted(workers.tick(frame.simulatedMs, unixMs(wall.now())), options.signal);
        if (ticked === undefined) return;
        options.server?.publish(ticked.targets);
        targets = ticked.targets.length;
      },
    };
    const logs: AsyncConsumer = { consume: (frame) => logsPipeline?.export(frame.logs).then(() => {}) };
    const report: AsyncConsumer = {
      consume: (frame, wanted) => {
        status = statusOf(frame.view, targets, wanted);
        options.onTick?.(status);
      },
    };
    await driveAsync(run, paced(), [publish, logs, report], {
      advance: (r, t) => advance(r, t, options.signal, budgetMs),
      signal: options.signal,
    });
  } finally {
    await workers?.close();
    // Both flush at once: a stopping run has a bounded time to deliver what is queued.
    // The pipeline shuts its sink down; with workers, the sink is shut down directly.
    await Promise.all([pipeline !== undefined ? pipeline.shutdown() : options.sink?.shutdown(), logsPipeline?.shutdown()]);
  }
  return statusOf(run.simulation.view(), status.targets, run.now + status.behindMs);
}
