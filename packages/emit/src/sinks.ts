/**
 * Where collected metrics go. Every sink takes one ResourceMetrics (one target's scrape) at a
 * time, as the SDK's exporters do, and reports failures instead of throwing them at the run.
 */
import { writeSync } from "node:fs";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import { JsonMetricsSerializer } from "@opentelemetry/otlp-transformer";
import type { PushMetricExporter, ResourceMetrics } from "@opentelemetry/sdk-metrics";

export interface MetricsSink {
  /** Resolves false when the data could not be delivered (after the exporter's own retries). */
  export(metrics: ResourceMetrics): Promise<boolean>;
  shutdown(): Promise<void>;
}

/** Runs one SDK export (callback style) and resolves whether it succeeded, reporting failures. */
export function delivered<T>(
  exporter: { export(items: T, done: (result: ExportResult) => void): void },
  items: T,
  onError: (error: Error | undefined) => void,
): Promise<boolean> {
  return new Promise((resolve) => {
    exporter.export(items, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) onError(result.error);
      resolve(result.code === ExportResultCode.SUCCESS);
    });
  });
}

/** An OpenTelemetry SDK push exporter (OTLP gRPC, HTTP/protobuf, HTTP/JSON) as a sink. */
export class ExporterSink implements MetricsSink {
  constructor(
    private readonly exporter: PushMetricExporter,
    private readonly onError: (error: Error | undefined) => void,
  ) {}

  export(metrics: ResourceMetrics): Promise<boolean> {
    return delivered(this.exporter, metrics, this.onError);
  }

  async shutdown(): Promise<void> {
    await this.exporter.shutdown();
  }
}

/**
 * OTLP-JSON lines: each scrape is one ExportMetricsServiceRequest in the OTLP JSON encoding
 * (the SDK's own serializer), one per line, as the collector's file exporter writes them.
 */
export class OtlpJsonLinesSink implements MetricsSink {
  private readonly decoder = new TextDecoder();

  /** `fd` is an open file descriptor; the caller owns it. */
  constructor(private readonly fd: number) {}

  async export(metrics: ResourceMetrics): Promise<boolean> {
    const bytes = JsonMetricsSerializer.serializeRequest(metrics);
    if (bytes === undefined) return false;
    writeSync(this.fd, `${this.decoder.decode(bytes)}\n`);
    return true;
  }

  async shutdown(): Promise<void> {}
}
