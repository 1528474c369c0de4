/**
 * A live run: the simulation is paced to the wall clock (optionally accelerated), every
 * interval the targets are refreshed for scraping and, when a sink is given, pushed through the
 * SDK stamped with wall-clock time so live backends accept them. Sinks only queue (delivery runs
 * in the background), and the loop yields to the event loop every few milliseconds whatever the
 * speed, so a slow collector, a busy scrape server or a huge --speed never stops the run from
 * answering requests and signals.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Blueprint } from "@gpusynth/blueprint";
import { ClusterRun, runaiApi } from "@gpusynth/constructs";
import type { ControlPlaneServer } from "./api-server/server.js";
import { LogsPipeline, type LogsSink } from "./logs-pipeline.js";
import { MetricsPipeline } from "./metrics-pipeline.js";
import type { ScrapeServer } from "./scrape-server.js";
import type { MetricsSink } from "./sinks.js";

export interface LiveOptions {
  /** Simulated seconds per wall-clock second. */
  readonly speed: number;
  readonly intervalMs: number;
  /** Stop after this much simulated time; run until aborted when absent. */
  readonly durationMs?: number;
  readonly seed?: number;
  readonly sink?: MetricsSink;
  /** Where log records go (OTLP, console); none when absent. */
  readonly logs?: LogsSink;
  readonly server?: ScrapeServer;
  /** Serves the Run:ai control-plane API from this run, keeping `retentionMs` of history. */
  readonly api?: { readonly server: ControlPlaneServer; readonly retentionMs: number };
  readonly signal: AbortSignal;
  readonly onTick?: (status: LiveStatus) => void;
}

export interface LiveStatus {
  readonly simulatedMs: number;
  readonly targets: number;
  readonly pending: number;
  readonly running: number;
}

/** Simulated time advanced between checks of the wall clock (cheap even for 4,096 GPUs). */
const SIMULATION_SLICE_MS = 60_000;
/** Longest stretch of work between two turns of the event loop. */
const YIELD_EVERY_MS = 20;

/**
 * Advances the simulation towards `targetMs` in slices, yielding to the event loop between them;
 * stops early when aborted or after `budgetMs` of wall time (the run then emits what it has and
 * catches up on the next tick).
 */
async function advance(run: ClusterRun, targetMs: number, signal: AbortSignal, budgetMs: number): Promise<void> {
  const started = performance.now();
  let slice = started;
  while (run.now < targetMs && !signal.aborted) {
    run.advanceTo(Math.min(targetMs, run.now + SIMULATION_SLICE_MS));
    const now = performance.now();
    if (now - started > budgetMs) return;
    if (now - slice > YIELD_EVERY_MS) {
      await yieldToEventLoop();
      slice = performance.now();
    }
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const wake = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    signal.addEventListener("abort", wake, { once: true });
  });

export async function runLive(blueprint: Blueprint, options: LiveOptions): Promise<LiveStatus> {
  const wallStart = Date.now();
  // Records are stamped with the wall-clock moment their simulated time maps to.
  const clock = (simulatedUnixMs: number) => wallStart + (simulatedUnixMs - blueprint.time.start) / options.speed;
  const run = new ClusterRun(blueprint, {
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    logs: options.logs === undefined ? false : { clock },
    // Its history is kept in stamped (wall-clock) time, like everything the run emits, one
    // snapshot per whole number of intervals so every kept snapshot is a scrape's.
    ...(options.api === undefined
      ? {}
      : {
          controlPlane: {
            clock,
            retentionMs: options.api.retentionMs,
            stepMs: runaiApi.snapshotStep(options.api.retentionMs, options.intervalMs),
          },
        }),
  });
  if (run.controlPlane !== undefined) options.api?.server.attach(run.controlPlane);
  const pipeline = options.sink === undefined ? undefined : new MetricsPipeline(options.sink);
  const logsPipeline = options.logs === undefined ? undefined : new LogsPipeline(options.logs);
  let status: LiveStatus = { simulatedMs: 0, targets: 0, pending: 0, running: 0 };
  try {
    for (let tick = 0; !options.signal.aborted; tick++) {
      const wantedMs = Math.min((Date.now() - wallStart) * options.speed, options.durationMs ?? Number.POSITIVE_INFINITY);
      await advance(run, wantedMs, options.signal, options.intervalMs);
      if (options.signal.aborted) break;
      const frame = run.frame();
      options.server?.update(frame.targets);
      await pipeline?.scrape(frame.targets, Date.now(), options.signal);
      await logsPipeline?.export(frame.logs);
      const { view } = frame;
      status = {
        simulatedMs: frame.simulatedMs,
        targets: frame.targets.length,
        pending: view.pending.length,
        running: view.running.length,
      };
      options.onTick?.(status);
      if (options.durationMs !== undefined && run.now >= options.durationMs) break;
      await sleep(wallStart + (tick + 1) * options.intervalMs - Date.now(), options.signal);
    }
  } finally {
    // Both flush at once: a stopping run has a bounded time to deliver what is queued.
    await Promise.all([pipeline?.shutdown(), logsPipeline?.shutdown()]);
  }
  return { ...status, simulatedMs: run.now };
}
