/**
 * Sinks in the OpenTelemetry SDK's exporter shape, and several at once: a stock SDK exporter
 * (the SDK's own in-memory exporters here) plugs into a run, and a fan-out hands the same
 * scrapes and log records to each of its sinks — also the encoded scrapes of worker threads.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { InMemoryLogRecordExporter } from "@opentelemetry/sdk-logs";
import { AggregationTemporality, type DataPoint, InMemoryMetricExporter, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { fanOutLogs, OtlpJsonLinesLogsSink, sdkLogsSink } from "../src/logs-sinks.js";
import { emitOffline } from "../src/offline.js";
import { fanOutMetrics, OtlpJsonLinesSink, sdkMetricsSink } from "../src/sinks.js";

const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/scenarios/crash-loop.yaml", import.meta.url)));
const RUN = { durationMs: 20 * 60_000, intervalMs: 5 * 60_000 };

/** The SDK's in-memory log exporter forgets what it holds on shutdown, which a run's end calls. */
class KeepingLogExporter extends InMemoryLogRecordExporter {
  override async shutdown(): Promise<void> {}
}

describe("sinks", () => {
  it("take a stock SDK exporter, and give it and a file the same scrapes and log records", async () => {
    const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const logs = new KeepingLogExporter();
    const metricLines: string[] = [];
    const logLines: string[] = [];
    const result = await emitOffline(
      blueprint,
      fanOutMetrics(sdkMetricsSink(metrics), new OtlpJsonLinesSink((line) => metricLines.push(line))),
      { ...RUN, logs: fanOutLogs(sdkLogsSink(logs), new OtlpJsonLinesLogsSink((line) => logLines.push(line))) },
    );
    const exported = metrics.getMetrics();
    expect(exported.length).toBeGreaterThan(0);
    expect(exported.length).toBe(metricLines.length);
    const names = (line: string) =>
      (
        JSON.parse(line) as { resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<{ name: string }> }> }> }
      ).resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics.map((m) => m.name)));
    expect(exported.map((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics.map((m) => m.descriptor.name)))).toEqual(metricLines.map(names));
    // The exporter keeps what it was handed: each scrape's own values and times, not the next
    // scrape's (a series' point is set again at each scrape), as the file wrote them at the time.
    type JsonPoint = { timeUnixNano: string; asDouble?: number };
    const written = (line: string) =>
      (
        JSON.parse(line) as {
          resourceMetrics: Array<{
            scopeMetrics: Array<{ metrics: Array<Record<"gauge" | "sum", { dataPoints: JsonPoint[] } | undefined>> }>;
          }>;
        }
      ).resourceMetrics.flatMap((rm) =>
        rm.scopeMetrics.flatMap((sm) =>
          sm.metrics.flatMap((m) => (m.gauge ?? m.sum)?.dataPoints.map((p) => [p.timeUnixNano, p.asDouble ?? null]) ?? []),
        ),
      );
    const kept = (rm: ResourceMetrics) =>
      rm.scopeMetrics.flatMap((sm) =>
        sm.metrics.flatMap((m) =>
          (m.dataPoints as DataPoint<number>[]).map((p) => [
            String(BigInt(p.endTime[0]) * 1_000_000_000n + BigInt(p.endTime[1])),
            Number.isNaN(p.value) ? null : p.value,
          ]),
        ),
      );
    expect(new Set(metricLines.map((line) => written(line)[0]?.[0])).size).toBeGreaterThan(1);
    expect(exported.map(kept)).toEqual(metricLines.map(written));
    // What it keeps are DataPoints and nothing more (a series' Sample that is its point hands over
    // its point's fields alone), as the SDK's own reader would hand it.
    const fields = new Set(
      exported.flatMap((rm) =>
        rm.scopeMetrics.flatMap((sm) => sm.metrics.flatMap((m) => m.dataPoints.map((p) => Object.keys(p).join(",")))),
      ),
    );
    expect([...fields]).toEqual(["attributes,startTime,endTime,value"]);
    expect(logs.getFinishedLogRecords().length).toBe(result.logRecords);
    expect(logLines.length).toBeGreaterThan(0);
  });

  it("write a scrape of more points than a line holds as several requests, each a line, with worker threads too", async () => {
    type Request = {
      resourceMetrics: Array<{ resource: unknown; scopeMetrics: Array<{ scope: unknown; metrics: Array<Record<string, unknown>> }> }>;
    };
    /** Each point with its resource, scope and metric (its points left out), in the order the lines hold them. */
    const points = (lines: readonly string[]) =>
      lines.flatMap((line) =>
        (JSON.parse(line) as Request).resourceMetrics.flatMap((rm) =>
          rm.scopeMetrics.flatMap((sm) =>
            sm.metrics.flatMap((metric) => {
              const data = (metric.gauge ?? metric.sum) as { dataPoints: unknown[] };
              const { gauge: _, sum: __, ...rest } = metric;
              return data.dataPoints.map((point) => JSON.stringify([rm.resource, sm.scope, rest, point]));
            }),
          ),
        ),
      );
    const run = { durationMs: 5 * 60_000, intervalMs: 5 * 60_000 };
    const whole: string[] = [];
    await emitOffline(blueprint, new OtlpJsonLinesSink((line) => whole.push(line)), run);
    // Lines of at most 50 points here (262,144 in a run): crash-loop's node-exporter scrape holds thousands.
    for (const workers of [undefined, 2]) {
      const cut: string[] = [];
      await emitOffline(blueprint, new OtlpJsonLinesSink((line) => cut.push(line), 50), {
        ...run,
        ...(workers === undefined ? {} : { workers }),
      });
      expect(Math.max(...cut.map((line) => points([line]).length))).toBe(50);
      expect(cut.length).toBeGreaterThan(whole.length);
      if (workers === undefined) expect(points(cut)).toEqual(points(whole));
      // Workers hand over their targets in their own order; each target's lines stay in order.
      else expect(points(cut).sort()).toEqual(points(whole).sort());
    }
  });

  it("write an export of more log records than a line holds as several requests, each a line", async () => {
    const whole: string[] = [];
    const cut: string[] = [];
    // Lines of at most 100 records here (65,536 in a run): a 5-minute interval of crash-loop writes thousands.
    await emitOffline(blueprint, undefined, {
      durationMs: 5 * 60_000,
      intervalMs: 5 * 60_000,
      logs: fanOutLogs(new OtlpJsonLinesLogsSink((line) => whole.push(line)), new OtlpJsonLinesLogsSink((line) => cut.push(line), 100)),
    });
    type Request = { resourceLogs: Array<{ resource: unknown; scopeLogs: Array<{ scope: unknown; logRecords: unknown[] }> }> };
    /** Each record with its resource and scope. */
    const records = (lines: readonly string[]) =>
      lines.flatMap((line) =>
        (JSON.parse(line) as Request).resourceLogs.flatMap((rl) =>
          rl.scopeLogs.flatMap((sl) => sl.logRecords.map((record) => JSON.stringify([rl.resource, sl.scope, record]))),
        ),
      );
    const counts = cut.map((line) => records([line]).length);
    expect(Math.max(...counts)).toBe(100);
    expect(cut.length).toBeGreaterThan(whole.length);
    // The same records; a request groups its records by resource, so each line in its own order.
    const sorted = (lines: readonly string[]) => records(lines).sort().join("\n");
    expect(sorted(cut) === sorted(whole)).toBe(true);
  });

  it("fan worker threads' encoded scrapes out to every file, as one thread writes them", async () => {
    const single: string[] = [];
    await emitOffline(blueprint, new OtlpJsonLinesSink((line) => single.push(line)), RUN);
    const [a, b]: [string[], string[]] = [[], []];
    await emitOffline(
      blueprint,
      fanOutMetrics(new OtlpJsonLinesSink((line) => a.push(line)), new OtlpJsonLinesSink((line) => b.push(line))),
      { ...RUN, workers: 2 },
    );
    expect(a).toEqual(b);
    // Workers hand over their targets in their own order: the same lines, perhaps not in one order.
    expect([...a].sort()).toEqual([...single].sort());
  });

  it("refuse worker threads when a fanned-out sink cannot take their encoded scrapes", async () => {
    const fanned = fanOutMetrics(
      sdkMetricsSink(new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)),
      new OtlpJsonLinesSink(() => {}),
    );
    await expect(emitOffline(blueprint, fanned, { ...RUN, workers: 2 })).rejects.toThrow(
      /worker threads need a sink that takes encoded scrapes/,
    );
  });
});
