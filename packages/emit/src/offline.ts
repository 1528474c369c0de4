/**
 * An offline run: the simulation advances as fast as the CPU allows and every target is
 * scraped at each interval of simulated time, stamped with simulated time.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { ClusterLogs, ClusterMetrics } from "@gpusynth/constructs";
import { Simulation } from "@gpusynth/sim";
import { LogsPipeline, type LogsSink } from "./logs-pipeline.js";
import { MetricsPipeline, type ScrapeReport } from "./metrics-pipeline.js";
import type { MetricsSink } from "./sinks.js";

export interface OfflineOptions {
  readonly durationMs: number;
  readonly intervalMs: number;
  readonly seed?: number;
  /** Where log records (Kubernetes events, the scheduler's log) go; none when absent. */
  readonly logs?: LogsSink;
  /** Called once with the simulation before it runs (to subscribe to its events). */
  readonly onStart?: (simulation: Simulation) => void;
  /** Called after each scrape with the simulated time reached. */
  readonly onScrape?: (t: number, report: ScrapeReport) => void;
}

export interface OfflineResult {
  readonly scrapes: number;
  readonly points: number;
  readonly failedTargets: number;
  readonly logRecords: number;
  readonly simulation: Simulation;
}

export async function emitOffline(blueprint: Blueprint, sink: MetricsSink | undefined, options: OfflineOptions): Promise<OfflineResult> {
  const simulation = new Simulation(blueprint, options.seed === undefined ? {} : { seed: options.seed });
  const metrics = new ClusterMetrics(blueprint);
  simulation.onEvent(metrics.record);
  const logs = options.logs === undefined ? undefined : new ClusterLogs(blueprint);
  if (logs !== undefined) simulation.onEvent(logs.record);
  const logsPipeline = options.logs === undefined ? undefined : new LogsPipeline(options.logs);
  options.onStart?.(simulation);
  const pipeline = sink === undefined ? undefined : new MetricsPipeline(sink);
  let logRecords = 0;
  let scrapes = 0;
  let points = 0;
  let failedTargets = 0;
  try {
    for (let t = options.intervalMs; t <= options.durationMs; t += options.intervalMs) {
      simulation.runUntil(t);
      const view = simulation.view();
      const report =
        pipeline === undefined
          ? { targets: 0, points: 0, failedTargets: 0 }
          : await pipeline.scrape(metrics.collect(view), blueprint.time.start + t);
      if (logs !== undefined && logsPipeline !== undefined) logRecords += (await logsPipeline.export(logs.drain(view))).records;
      scrapes++;
      points += report.points;
      failedTargets += report.failedTargets;
      options.onScrape?.(t, report);
    }
  } finally {
    await pipeline?.shutdown();
    await logsPipeline?.shutdown();
  }
  return { scrapes, points, failedTargets, logRecords, simulation };
}
