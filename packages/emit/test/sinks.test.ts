/**
 * Sinks in the OpenTelemetry SDK's exporter shape, and several at once: a stock SDK exporter
 * (the SDK's own in-memory exporters here) plugs into a run, and a fan-out hands the same
 * scrapes and log records to each of its sinks — also the encoded scrapes of worker threads.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { InMemoryLogRecordExporter } from "@opentelemetry/sdk-logs";
import { AggregationTemporality, InMemoryMetricExporter } from "@opentelemetry/sdk-metrics";
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
    expect(logs.getFinishedLogRecords().length).toBe(result.logRecords);
    expect(logLines.length).toBeGreaterThan(0);
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
