/** Where log records go offline or on the console (OTLP-JSON lines, or one line each), a stock SDK log exporter, or several at once (the live OTLP push is delivery/). */

import { ExportResultCode } from "@opentelemetry/core";
import type { LogRecordExporter, ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { JsonLogsEncoder } from "./delivery/json-logs.js";
import type { LogsSink } from "./logs-pipeline.js";

/**
 * Log records in lines of at most this many: one line is one JavaScript string, and V8's strings
 * hold at most 2^29 - 24 characters (about 512 MiB). A record takes 0.6-1 KiB in OTLP JSON (0.64
 * in 40 minutes of crash-loop.yaml's logs, 0.95 in a day of platform.yaml's events), so a line
 * stays near 64 MiB; a 12-hour interval of packages/sim/test/fixtures/stress.yaml's logs as one
 * line ended the run with "RangeError: Invalid string length".
 */
export const RECORDS_PER_LINE = 65_536;

/**
 * One ExportLogsServiceRequest per export, in the OTLP JSON encoding (the SDK's JsonLogsSerializer's
 * text), one per line; an export of more than `recordsPerLine` records is written as several
 * requests, in order, each a line.
 */
export class OtlpJsonLinesLogsSink implements LogsSink {
  private readonly encoder = new JsonLogsEncoder();
  /** `writeLine` stores one whole line (newline included) or throws, which ends the run. */
  constructor(
    private readonly writeLine: (line: string) => void,
    private readonly recordsPerLine = RECORDS_PER_LINE,
  ) {}

  async export(records: ReadableLogRecord[]): Promise<boolean> {
    if (records.length <= this.recordsPerLine) this.writeLine(`${this.encoder.encode(records)}\n`);
    else
      for (let start = 0; start < records.length; start += this.recordsPerLine)
        this.writeLine(`${this.encoder.encode(records.slice(start, start + this.recordsPerLine))}\n`);
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
