/**
 * Where collected metrics go. Every sink takes one ResourceMetrics (one target's scrape) at a
 * time, as the SDK's exporters do. The live OTLP push (delivery/otlp-delivery.ts) queues and
 * reports failures without ever throwing at the run; an offline file sink throws when its file
 * cannot be written, which ends the run with the path and the cause.
 */
import { ExportResultCode } from "@opentelemetry/core";
import type { DataPoint, MetricData, PushMetricExporter, ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { pointCopied } from "./staleness.js";
import { type EncodedScrape, encodeScrape, POINTS_PER_LINE, type WireFormat } from "./wire.js";

export interface MetricsSink {
  /**
   * Resolves false when the data was not accepted (a queueing sink accepts it and reports delivery
   * itself). The points are the target's own (its series keep their DataPoints, target-provider.ts):
   * valid until the target's next scrape, so a sink encodes them or copies them before then.
   */
  export(metrics: ResourceMetrics): Promise<boolean>;
  /**
   * Resolves when the sink can take more without dropping any (a paced OTLP delivery: its queue
   * has room again). An offline run, which makes scrapes as fast as the CPU allows, waits on it
   * after each scrape; absent, the sink always can.
   */
  drain?(): Promise<void>;
  /**
   * The scrape is over (the SDK exporters' forceFlush, called after a scrape's last target): an
   * OTLP delivery's next export starts the next scrape's time to wait for room.
   */
  forceFlush?(): Promise<void>;
  shutdown(): Promise<void>;
}

/** A sink that also takes scrapes encoded elsewhere (by worker threads) in its wire format. */
export interface EncodedMetricsSink extends MetricsSink {
  readonly wireFormat: WireFormat;
  /**
   * Stores a scrape encoded with encodeScrape(wireFormat, …); resolves once it is stored, which a
   * delivery with a bounded queue may put off as its exports are (waiting for room), so scrapes
   * encoded by worker threads are not dropped where one encoded here would wait. The request
   * bodies are the sink's to read only until then (a worker carves them again: shared-slabs.ts): a
   * sink that keeps them retains those in shared memory (retainShared) until it is done with them,
   * as the OTLP delivery's slabs do, or copies them.
   */
  accept(scrape: EncodedScrape): void | Promise<void>;
}

/**
 * OTLP-JSON lines: each scrape is one ExportMetricsServiceRequest in the OTLP JSON encoding
 * (json-metrics.ts), one per line, as the collector's file exporter writes them; a scrape of more
 * than `pointsPerLine` points (POINTS_PER_LINE, wire.ts) is several requests, one per line.
 */
export class OtlpJsonLinesSink implements EncodedMetricsSink {
  readonly wireFormat: WireFormat;

  /**
   * `writeLine` stores one whole line (newline included) or throws; a throw ends the run, so a
   * failed write is never counted as delivered. The caller owns the file behind it.
   */
  constructor(
    private readonly writeLine: (line: string) => void,
    pointsPerLine = POINTS_PER_LINE,
  ) {
    this.wireFormat = { kind: "otlp-json-line", pointsPerLine };
  }

  async export(metrics: ResourceMetrics): Promise<boolean> {
    this.accept(encodeScrape(this.wireFormat, metrics));
    return true;
  }

  accept(scrape: EncodedScrape): void {
    if (scrape.kind !== "otlp-json-line") throw new Error(`OtlpJsonLinesSink: expected an OTLP-JSON line, got ${scrape.kind}`);
    for (const line of scrape.lines) this.writeLine(line);
  }

  async shutdown(): Promise<void> {}
}

/**
 * A stock OpenTelemetry SDK metric exporter as a sink (the SDK's ConsoleMetricExporter, an
 * OTLP exporter, an InMemoryMetricExporter in a test): each target's scrape is one export call,
 * accepted when the exporter reports success. The exporter is handed a copy of the points, as
 * the SDK's own MetricReader hands it points of their own: it may keep them (an
 * InMemoryMetricExporter does), past the next scrape that sets the series' points again.
 */
export function sdkMetricsSink(exporter: PushMetricExporter): MetricsSink {
  return {
    export: (metrics) =>
      new Promise((resolve) => exporter.export(metricsKept(metrics), (result) => resolve(result.code === ExportResultCode.SUCCESS))),
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
  };
}

/**
 * Several sinks as one: every scrape goes to each (a run that pushes OTLP and writes a file at
 * once), accepted when all accept it, and all are shut down together. It takes encoded scrapes
 * from worker threads when every sink takes the same wire format.
 */
export function fanOutMetrics(...sinks: readonly MetricsSink[]): MetricsSink {
  // One sink needs no fan-out: it keeps its own shape (an encoded sink stays one).
  if (sinks.length === 1) return sinks[0] as MetricsSink;
  const exportAll = async (metrics: ResourceMetrics) => (await Promise.all(sinks.map((s) => s.export(metrics)))).every(Boolean);
  const shutdown = async () => {
    await Promise.all(sinks.map((s) => s.shutdown()));
  };
  const drain = async () => {
    await Promise.all(sinks.map((s) => s.drain?.()));
  };
  const forceFlush = async () => {
    await Promise.all(sinks.map((s) => s.forceFlush?.()));
  };
  const encoded = sinks.filter((s): s is EncodedMetricsSink => "wireFormat" in s && "accept" in s);
  const format = encoded[0]?.wireFormat;
  const oneFormat = encoded.length === sinks.length && encoded.every((s) => JSON.stringify(s.wireFormat) === JSON.stringify(format));
  if (format === undefined || !oneFormat) return { export: exportAll, drain, forceFlush, shutdown };
  const fanned: EncodedMetricsSink = {
    wireFormat: format,
    export: exportAll,
    accept: async (scrape) => {
      await Promise.all(encoded.map((sink) => sink.accept(scrape)));
    },
    drain,
    forceFlush,
    shutdown,
  };
  return fanned;
}

/**
 * `metrics` with metrics and points of its own, for a sink that keeps a scrape past the target's
 * next (a stock exporter, a test): the same label sets (which never change), values and times
 * copied. A scrape's own are valid only until then (target-provider.ts).
 */
export function metricsKept(metrics: ResourceMetrics): ResourceMetrics {
  return {
    ...metrics,
    scopeMetrics: metrics.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics.map(
        (metric) =>
          ({
            ...metric,
            dataPoints: (metric.dataPoints as DataPoint<number>[]).map(pointCopied),
          }) as MetricData,
      ),
    })),
  };
}
