/**
 * An offline run: the simulation advances as fast as the CPU allows and every target is
 * scraped at each interval of simulated time, stamped with simulated time.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { ClusterMetrics } from "@gpusynth/constructs";
import { Simulation } from "@gpusynth/sim";
import { MetricsPipeline, type ScrapeReport } from "./metrics-pipeline.js";
import type { MetricsSink } from "./sinks.js";

export interface OfflineOptions {
  readonly durationMs: number;
  readonly intervalMs: number;
  readonly seed?: number;
  /** Called once with the simulation before it runs (to subscribe to its events). */
  readonly onStart?: (simulation: Simulation) => void;
  /** Called after each scrape with the simulated time reached. */
  readonly onScrape?: (t: number, report: ScrapeReport) => void;
}

export interface OfflineResult {
  readonly scrapes: number;
  readonly points: number;
  readonly failedTargets: number;
  readonly simulation: Simulation;
}

export async function emitOffline(blueprint: Blueprint, sink: MetricsSink, options: OfflineOptions): Promise<OfflineResult> {
  const simulation = new Simulation(blueprint, options.seed === undefined ? {} : { seed: options.seed });
  const metrics = new ClusterMetrics(blueprint);
  simulation.onEvent(metrics.record);
  options.onStart?.(simulation);
  const pipeline = new MetricsPipeline(sink);
  let scrapes = 0;
  let points = 0;
  let failedTargets = 0;
  try {
    for (let t = options.intervalMs; t <= options.durationMs; t += options.intervalMs) {
      simulation.runUntil(t);
      const report = await pipeline.scrape(metrics.collect(simulation.view()), blueprint.time.start + t);
      scrapes++;
      points += report.points;
      failedTargets += report.failedTargets;
      options.onScrape?.(t, report);
    }
  } finally {
    await pipeline.shutdown();
  }
  return { scrapes, points, failedTargets, simulation };
}
