/** Where log records go offline or on the console (OTLP-JSON lines, or one line each), a stock SDK log exporter, or several at once (the live OTLP push is delivery/). */

import { ExportResultCode } from "@opentelemetry/core";
import type { LogRecordExporter, ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { JsonLogsEncoder } from "./delivery/json-logs.js";
import type { LogsSink } from "./logs-pipeline.js";

/** One ExportLogsServiceRequest per export, in the OTLP JSON encoding (the SDK's JsonLogsSerializer's text), one per line. */
export class OtlpJsonLinesLogsSink implements LogsSink {
  private readonly encoder = new JsonLogsEncoder();
  /** `writeLine` stores one whole line (newline included) or throws, which ends the run. */
  constructor(private readonly writeLine: (line: string) => void) {}

  async export(records: ReadableLogRecord[]): Promise<boolean> {
    this.writeLine(`${this.encoder.encode(records)}\n`);
    return true;
  }

  async shutdown(): Promise<void> {}
}

/** A quick look: one line per record on a stream (the scheduler's lines as the container wrote them). */
export class ConsoleLogsSink implements LogsSink {
  constructor(private readonly write: (text: string) => void) {}

  async export(records: ReadableLogRecord[]): Promise<boolean> {
    for (const r of records) {
      const attrs = r.attributes;
      const resource = r.resource.attributes;
      if (attrs["k8s.event.reason"] !== undefined) {
        const time = new Date(r.hrTime[0] * 1000 + r.hrTime[1] / 1e6).toISOString();
        const object = `${resource["k8s.object.kind"]} ${attrs["k8s.namespace.name"]}/${resource["k8s.object.name"]}`;
        this.write(`${time} event ${r.severityText} ${attrs["k8s.event.reason"]} ${object}: ${String(r.body).replace(/\n/g, " ")}\n`);
      } else {
        this.write(`${String(r.body)}\n`);
      }
    }
    return true;
  }

  async shutdown(): Promise<void> {}
}

/** A stock OpenTelemetry SDK log exporter as a sink: each interval's records are one export call. */
export function sdkLogsSink(exporter: LogRecordExporter): LogsSink {
  return {
    export: (records) => new Promise((resolve) => exporter.export(records, (result) => resolve(result.code === ExportResultCode.SUCCESS))),
    shutdown: () => exporter.shutdown(),
  };
}

/** Several log sinks as one: every batch to each, accepted when all accept it. */
export function fanOutLogs(...sinks: readonly LogsSink[]): LogsSink {
  if (sinks.length === 1) return sinks[0] as LogsSink;
  return {
    export: async (records) => (await Promise.all(sinks.map((s) => s.export(records)))).every(Boolean),
    shutdown: async () => {
      await Promise.all(sinks.map((s) => s.shutdown()));
    },
  };
}
