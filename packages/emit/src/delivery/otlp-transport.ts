/**
 * Sends encoded OTLP requests through the OpenTelemetry SDK's own export machinery — the
 * export delegate, its gRPC and HTTP transports, their configuration from the standard
 * OTEL_EXPORTER_OTLP_* variables (headers, compression, TLS, timeout) — fed with bytes that
 * were encoded once by the SDK's serializers (requests.ts), so a retry re-encodes nothing.
 *
 * Each attempt's failure is classified the way the OTLP specification asks a client to:
 * retryable (UNAVAILABLE and the other transient gRPC codes; HTTP 429, 502, 503, 504; a refused,
 * reset or timed-out connection) or not (the receiver refused the data itself).
 *
 * While the receiver is down the queue sends probes, each through a fresh exporter:
 * - gRPC: grpc-js backs a failing connection off up to 120 s (a returning collector was reached
 *   only 17.7 s after it was back), and it shares connections between clients whose channel
 *   options are equal. Every exporter therefore gets a user agent of its own ("gpusynth
 *   (channel N)"), so a probe opens a new connection at once; the probe that succeeds becomes the
 *   exporter used from then on.
 * - HTTP: the SDK's transport retries a refused connection within its timeout (1 s, 1.5 s, …)
 *   before it answers, so a probe gets a short timeout (doubled after each probe that times out,
 *   for a receiver that is merely slow) and, once one succeeds, a fresh exporter with the full
 *   timeout takes over.
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from "@opentelemetry/otlp-exporter-base/node-http";
import { convertLegacyOtlpGrpcOptions, createOtlpGrpcExportDelegate } from "@opentelemetry/otlp-grpc-exporter-base";
import {
  type ISerializer,
  JsonLogsSerializer,
  JsonMetricsSerializer,
  LogsExporterMetricsHelper,
  MetricsExporterMetricsHelper,
  ProtobufLogsSerializer,
  ProtobufMetricsSerializer,
} from "@opentelemetry/otlp-transformer";
import type { OtlpProtocol } from "../otlp.js";
import type { Outcome } from "./queue.js";
import type { EncodedRequest } from "./requests.js";

export type Signal = "metrics" | "logs";

/** gRPC status codes the OTLP specification lists as retryable (otlp.md, "Failures"). */
const RETRYABLE_GRPC = new Set([
  1 /* CANCELLED */, 4 /* DEADLINE_EXCEEDED */, 10 /* ABORTED */, 11 /* OUT_OF_RANGE */, 14 /* UNAVAILABLE */, 15 /* DATA_LOSS */,
]);
const RETRYABLE_HTTP = new Set([429, 502, 503, 504]);
/** Shortest probe timeout; doubled after a probe times out, up to the configured timeout. */
const PROBE_TIMEOUT_MS = 1000;
/** OTEL_EXPORTER_OTLP_TIMEOUT's default in the specification and the SDK. */
export const DEFAULT_TIMEOUT_MS = 10_000;

const GRPC_SERVICE: Record<Signal, { name: string; path: string }> = {
  metrics: { name: "MetricsExportService", path: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export" },
  logs: { name: "LogsExportService", path: "/opentelemetry.proto.collector.logs.v1.LogsService/Export" },
};

/** The SDK's serializers with the encoding step already done: requests pass through as bytes. */
function passThrough(signal: Signal, protocol: OtlpProtocol): ISerializer<EncodedRequest, unknown> {
  const json = protocol === "http/json";
  const responses =
    signal === "metrics" ? (json ? JsonMetricsSerializer : ProtobufMetricsSerializer) : json ? JsonLogsSerializer : ProtobufLogsSerializer;
  return {
    serializeRequest: (request) => request.body,
    deserializeResponse: (data) => responses.deserializeResponse(data),
  };
}

function itemCounter(signal: Signal) {
  const name = (signal === "metrics" ? MetricsExporterMetricsHelper : LogsExporterMetricsHelper).name;
  return { name, countItems: (request: EncodedRequest) => request.items };
}

let channels = 0;

function createExporter(signal: Signal, protocol: OtlpProtocol, url: string | undefined, timeoutMillis: number) {
  const serializer = passThrough(signal, protocol);
  const config = { ...(url === undefined ? {} : { url }), timeoutMillis, userAgent: `gpusynth (channel ${++channels})` };
  const identifier = signal === "metrics" ? "METRICS" : "LOGS";
  if (protocol === "grpc") {
    const service = GRPC_SERVICE[signal];
    return new OTLPExporterBase(
      createOtlpGrpcExportDelegate(
        convertLegacyOtlpGrpcOptions(config, identifier),
        serializer,
        `otlp_grpc_${signal === "metrics" ? "metric" : "log"}_exporter`,
        itemCounter(signal),
        undefined,
        service.name,
        service.path,
      ),
    );
  }
  const contentType = protocol === "http/json" ? "application/json" : "application/x-protobuf";
  return new OTLPExporterBase(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions(config, identifier, `v1/${signal}`, { "Content-Type": contentType }),
      serializer,
      `otlp_http_${signal === "metrics" ? "metric" : "log"}_exporter`,
      itemCounter(signal),
      undefined,
    ),
  );
}

/** Retryable or not, from what the SDK's transports report. */
export function classify(error: Error | undefined): Exclude<Outcome, { kind: "delivered" }> {
  const failure = error ?? new Error("export failed");
  const code = (failure as { code?: unknown }).code;
  if (typeof code === "number") {
    // gRPC errors carry a status code below 17 and `details`; HTTP errors carry the status.
    if ("details" in failure && code < 17)
      return RETRYABLE_GRPC.has(code) ? { kind: "retry", error: failure } : { kind: "rejected", error: failure };
    if (code >= 400) return RETRYABLE_HTTP.has(code) ? { kind: "retry", error: failure } : { kind: "rejected", error: failure };
  }
  // Network errors (ECONNREFUSED, ECONNRESET, timeouts) and "retryable status" exhaustion.
  return { kind: "retry", error: failure };
}

function isTimeout(error: Error): boolean {
  return /timed out|deadline/i.test(error.message) || (error as { code?: unknown }).code === 4;
}

export class OtlpTransport {
  private exporter: OTLPExporterBase<EncodedRequest> | undefined;
  private probeTimeoutMs: number;

  constructor(
    private readonly signal: Signal,
    private readonly protocol: OtlpProtocol,
    private readonly url: string | undefined,
    private readonly timeoutMs: number = DEFAULT_TIMEOUT_MS,
  ) {
    this.probeTimeoutMs = Math.min(PROBE_TIMEOUT_MS, timeoutMs);
  }

  /** One attempt; see the file's comment for what a probe does. */
  async send(request: EncodedRequest, attempt: { readonly probe: boolean }): Promise<Outcome> {
    if (!attempt.probe) {
      this.exporter ??= createExporter(this.signal, this.protocol, this.url, this.timeoutMs);
      return exportOnce(this.exporter, request);
    }
    const grpc = this.protocol === "grpc";
    const probe = createExporter(this.signal, this.protocol, this.url, grpc ? this.timeoutMs : this.probeTimeoutMs);
    const outcome = await exportOnce(probe, request);
    if (outcome.kind === "retry") {
      if (isTimeout(outcome.error)) this.probeTimeoutMs = Math.min(this.probeTimeoutMs * 2, this.timeoutMs);
      void probe.shutdown().catch(() => {});
      return outcome;
    }
    this.probeTimeoutMs = Math.min(PROBE_TIMEOUT_MS, this.timeoutMs);
    this.shutdown();
    if (grpc) this.exporter = probe;
    else void probe.shutdown().catch(() => {});
    return outcome;
  }

  /** Closes the channel without waiting for requests still in flight (the queue reports those). */
  shutdown(): void {
    void this.exporter?.shutdown().catch(() => {});
    this.exporter = undefined;
  }
}

function exportOnce(exporter: OTLPExporterBase<EncodedRequest>, request: EncodedRequest): Promise<Outcome> {
  return new Promise((resolve) => {
    exporter.export(request, (result: ExportResult) =>
      resolve(result.code === ExportResultCode.SUCCESS ? { kind: "delivered" } : classify(result.error)),
    );
  });
}
