/**
 * A live run: the simulation is paced to the wall clock (optionally accelerated), every
 * interval the targets are refreshed for scraping and, when a sink is given, pushed through the
 * SDK stamped with wall-clock time so live backends accept them. A failing sink costs retries
 * and a warning, never the run.
 */
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
  readonly exportedScrapes: number;
  readonly failedScrapes: number;
  readonly logRecords: number;
  readonly failedLogRecords: number;
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
  let logRecords = 0;
  let failedLogRecords = 0;
  let exportedScrapes = 0;
  let failedScrapes = 0;
  let status: LiveStatus = {
    simulatedMs: 0,
    targets: 0,
    pending: 0,
    running: 0,
    exportedScrapes,
    failedScrapes,
    logRecords,
    failedLogRecords,
  };
  try {
    for (let tick = 0; !options.signal.aborted; tick++) {
      const simulatedMs = Math.min((Date.now() - wallStart) * options.speed, options.durationMs ?? Number.POSITIVE_INFINITY);
      simulation.runUntil(simulatedMs);
      const view = simulation.view();
      const collected: TargetSamples[] = metrics.collect(view);
      options.server?.update(collected);
      controlPlane?.observe(view);
      if (pipeline !== undefined) {
        const report = await pipeline.scrape(collected, Date.now());
        exportedScrapes += report.targets - report.failedTargets;
        failedScrapes += report.failedTargets;
      }
      if (logs !== undefined && logsPipeline !== undefined) {
        const report = await logsPipeline.export(logs.drain(view));
        logRecords += report.records - report.failed;
        failedLogRecords += report.failed;
      }
      status = {
        simulatedMs,
        targets: collected.length,
        pending: view.pending.length,
        running: view.running.length,
        exportedScrapes,
        failedScrapes,
        logRecords,
        failedLogRecords,
      };
      options.onTick?.(status);
      if (options.durationMs !== undefined && simulatedMs >= options.durationMs) break;
      await sleep(wallStart + (tick + 1) * options.intervalMs - Date.now(), options.signal);
    }
  } finally {
    await pipeline?.shutdown();
    await logsPipeline?.shutdown();
  }
  // Stopped between ticks: report the simulated time actually reached.
  simulation.runUntil(Math.min((Date.now() - wallStart) * options.speed, options.durationMs ?? Number.POSITIVE_INFINITY));
  return { ...status, simulatedMs: simulation.now };
}
