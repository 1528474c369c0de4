/** Where log records go: an SDK OTLP log exporter, OTLP-JSON lines, or the console. */
import { writeSync } from "node:fs";
import { OTLPLogExporter as GrpcLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { OTLPLogExporter as HttpJsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as HttpProtobufLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { JsonLogsSerializer } from "@opentelemetry/otlp-transformer";
import type { LogRecordExporter, ReadableLogRecord } from "@opentelemetry/sdk-logs";
import type { LogsSink } from "./logs-pipeline.js";
import type { OtlpProtocol } from "./otlp.js";
import { delivered } from "./sinks.js";

export function createOtlpLogExporter(protocol: OtlpProtocol, url?: string): LogRecordExporter {
  const config = url === undefined ? {} : { url };
  switch (protocol) {
    case "grpc":
      return new GrpcLogExporter(config);
    case "http/protobuf":
      return new HttpProtobufLogExporter(config);
    case "http/json":
      return new HttpJsonLogExporter(config);
  }
}

export class LogExporterSink implements LogsSink {
  constructor(
    private readonly exporter: LogRecordExporter,
    private readonly onError: (error: Error | undefined) => void,
  ) {}

  export(records: ReadableLogRecord[]): Promise<boolean> {
    return delivered(this.exporter, records, this.onError);
  }

  async shutdown(): Promise<void> {
    await this.exporter.shutdown();
  }
}

/** One ExportLogsServiceRequest per export, in the OTLP JSON encoding, one per line. */
export class OtlpJsonLinesLogsSink implements LogsSink {
  private readonly decoder = new TextDecoder();
  constructor(private readonly fd: number) {}

  async export(records: ReadableLogRecord[]): Promise<boolean> {
    const bytes = JsonLogsSerializer.serializeRequest(records);
    if (bytes === undefined) return false;
    writeSync(this.fd, `${this.decoder.decode(bytes)}\n`);
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
