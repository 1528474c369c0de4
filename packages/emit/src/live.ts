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
import { ClusterLogs, ClusterMetrics, runaiApi, type TargetSamples } from "@gpusynth/constructs";
import { Simulation } from "@gpusynth/sim";
import type { ControlPlaneServer } from "./control-plane/server.js";
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
async function advance(simulation: Simulation, targetMs: number, signal: AbortSignal, budgetMs: number): Promise<void> {
  const started = performance.now();
  let slice = started;
  while (simulation.now < targetMs && !signal.aborted) {
    simulation.runUntil(Math.min(targetMs, simulation.now + SIMULATION_SLICE_MS));
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
  const simulation = new Simulation(blueprint, options.seed === undefined ? {} : { seed: options.seed });
  const metrics = new ClusterMetrics(blueprint);
  simulation.onEvent(metrics.record);
  const pipeline = options.sink === undefined ? undefined : new MetricsPipeline(options.sink);
  const wallStart = Date.now();
  // Records are stamped with the wall-clock moment their simulated time maps to.
  const clock = (simulatedUnixMs: number) => wallStart + (simulatedUnixMs - blueprint.time.start) / options.speed;
  const logs = options.logs === undefined ? undefined : new ClusterLogs(blueprint, clock);
  if (logs !== undefined) simulation.onEvent(logs.record);
  const logsPipeline = options.logs === undefined ? undefined : new LogsPipeline(options.logs);
  // Its history is kept in stamped (wall-clock) time, like everything the run emits, one
  // snapshot per whole number of intervals so every kept snapshot is a scrape's.
  const controlPlane =
    options.api === undefined
      ? undefined
      : new runaiApi.ControlPlane(blueprint, metrics.activity, {
          clock,
          retentionMs: options.api.retentionMs,
          stepMs: runaiApi.snapshotStep(options.api.retentionMs, options.intervalMs),
        });
  if (controlPlane !== undefined) {
    simulation.onEvent(controlPlane.record);
    options.api?.server.attach(controlPlane);
  }
  let status: LiveStatus = { simulatedMs: 0, targets: 0, pending: 0, running: 0 };
  try {
    for (let tick = 0; !options.signal.aborted; tick++) {
      const wantedMs = Math.min((Date.now() - wallStart) * options.speed, options.durationMs ?? Number.POSITIVE_INFINITY);
      await advance(simulation, wantedMs, options.signal, options.intervalMs);
      if (options.signal.aborted) break;
      const view = simulation.view();
      const collected: TargetSamples[] = metrics.collect(view);
      options.server?.update(collected);
      controlPlane?.observe(view);
      await pipeline?.scrape(collected, Date.now(), options.signal);
      if (logs !== undefined && logsPipeline !== undefined) await logsPipeline.export(logs.drain(view));
      status = { simulatedMs: simulation.now, targets: collected.length, pending: view.pending.length, running: view.running.length };
      options.onTick?.(status);
      if (options.durationMs !== undefined && simulation.now >= options.durationMs) break;
      await sleep(wallStart + (tick + 1) * options.intervalMs - Date.now(), options.signal);
    }
  } finally {
    // Both flush at once: a stopping run has a bounded time to deliver what is queued.
    await Promise.all([pipeline?.shutdown(), logsPipeline?.shutdown()]);
  }
  return { ...status, simulatedMs: simulation.now };
}
