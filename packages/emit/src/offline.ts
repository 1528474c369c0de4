/**
 * An offline run: the simulation advances as fast as the CPU allows and every target is
 * scraped at each interval of simulated time, stamped with simulated time.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { type AsyncConsumer, BLUEPRINT_CALENDAR, ClusterRun, driveAsync, every } from "@gpusynth/constructs";
import type { DomainEvent, Simulation } from "@gpusynth/sim";
import { LogsPipeline, type LogsSink } from "./logs-pipeline.js";
import { MetricsPipeline, type ScrapeReport } from "./metrics-pipeline.js";
import type { RunSelection } from "./run-selection.js";
import type { MetricsSink } from "./sinks.js";
import { shardWorkers } from "./workers/shard-workers.js";

export interface OfflineOptions extends RunSelection {
  readonly durationMs: number;
  readonly intervalMs: number;
  /** Where log records (Kubernetes events, the scheduler's log) go; none when absent. */
  readonly logs?: LogsSink;
  /** Further listeners of the simulation's events (e.g. a summary). */
  readonly observers?: ReadonlyArray<(event: DomainEvent) => void>;
  /** Called after each scrape with the simulated time reached and the workloads pending then. */
  readonly onScrape?: (t: number, report: ScrapeReport, pending: number) => void;
}

export interface OfflineResult {
  readonly scrapes: number;
  readonly points: number;
  readonly failedTargets: number;
  readonly logRecords: number;
  readonly simulation: Simulation;
}

const NO_SCRAPE: ScrapeReport = { targets: 0, points: 0, failedTargets: 0 };

export async function emitOffline(blueprint: Blueprint, sink: MetricsSink | undefined, options: OfflineOptions): Promise<OfflineResult> {
  const workers = sink === undefined ? undefined : shardWorkers(blueprint, { ...options, sink }, { kind: "calendar" });
  // With workers, this thread's run writes the logs and feeds the observers; the workers emit the metrics.
  const metricsHere = sink !== undefined && workers === undefined;
  const run = new ClusterRun(blueprint, {
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    metrics: metricsHere,
    // Offline, only the metrics read the GPUs: a thread that emits none keeps none of their runs.
    readsGpus: metricsHere,
    logs: options.logs === undefined ? false : (options.logSources ?? true),
    ...(options.observers === undefined ? {} : { observers: options.observers }),
    ...(options.shard === undefined ? {} : { shard: options.shard }),
  });
  const logsPipeline = options.logs === undefined ? undefined : new LogsPipeline(options.logs);
  const pipeline = sink === undefined || workers !== undefined ? undefined : new MetricsPipeline(sink, blueprint.telemetry.serviceMonitors);
  let logRecords = 0;
  let scrapes = 0;
  let points = 0;
  let failedTargets = 0;
  // Offline, samples are stamped on the blueprint's calendar.
  const stampOf = (t: number) => BLUEPRINT_CALENDAR(blueprint.time.start + t);
  // The workers advance and collect while this thread simulates for the logs and observers.
  let ticked: Promise<ScrapeReport> | undefined;
  let report = NO_SCRAPE;
  const metrics: AsyncConsumer = {
    before: (t) => {
      ticked = workers?.tick(t, stampOf(t)).then((w) => ({ targets: w.targets.length, points: w.points, failedTargets: w.failedTargets }));
    },
    consume: async (frame) => {
      report =
        ticked !== undefined
          ? await ticked
          : pipeline === undefined
            ? NO_SCRAPE
            : await pipeline.scrape(frame.targets, stampOf(frame.simulatedMs));
      scrapes++;
      points += report.points;
      failedTargets += report.failedTargets;
      // A paced sink (an OTLP push) sets the pace: the next scrape waits until it has room.
      await sink?.drain?.();
    },
  };
  const logs: AsyncConsumer = {
    consume: async (frame) => {
      if (logsPipeline !== undefined) logRecords += (await logsPipeline.export(frame.logs)).records;
    },
  };
  const progress: AsyncConsumer = { consume: (frame) => options.onScrape?.(frame.simulatedMs, report, frame.view.pending.length) };
  try {
    await driveAsync(run, every(options.intervalMs, { toMs: options.durationMs }), [metrics, logs, progress]);
  } finally {
    await workers?.close();
    // The pipeline shuts its sink down; with workers, the sink is shut down directly.
    await (pipeline ?? sink)?.shutdown();
    await logsPipeline?.shutdown();
  }
  return { scrapes, points, failedTargets, logRecords, simulation: run.simulation };
}
