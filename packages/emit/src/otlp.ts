/**
 * OTLP push exporters from the OpenTelemetry JS SDK, chosen the way OTel users expect:
 * OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL, then gRPC (gpusynth's
 * default). Endpoint, headers, timeout and compression come from the standard OTEL_EXPORTER_OTLP_*
 * variables, which the SDK exporters read themselves; an explicit URL overrides the endpoint.
 */
import { OTLPMetricExporter as GrpcExporter } from "@opentelemetry/exporter-metrics-otlp-grpc";
import { OTLPMetricExporter as HttpJsonExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as HttpProtobufExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";

export const OTLP_PROTOCOLS = ["grpc", "http/protobuf", "http/json"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export function isOtlpProtocol(value: string): value is OtlpProtocol {
  return (OTLP_PROTOCOLS as readonly string[]).includes(value);
}

/** The protocol the environment asks for, or undefined when it names none (or an unknown one). */
export function protocolFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  return env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
}

/** True when the environment names an OTLP endpoint for metrics. */
export function endpointFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  return env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
}

export function createOtlpExporter(protocol: OtlpProtocol, url?: string): PushMetricExporter {
  const config = url === undefined ? {} : { url };
  switch (protocol) {
    case "grpc":
      return new GrpcExporter(config);
    case "http/protobuf":
      return new HttpProtobufExporter(config);
    case "http/json":
      return new HttpJsonExporter(config);
  }
}

/**
 * The URL an exporter gets for an endpoint given like OTEL_EXPORTER_OTLP_ENDPOINT (a base):
 * gRPC uses it as is; HTTP appends the signal's path, /v1/metrics or /v1/logs, as the SDK does
 * for the environment variable.
 */
export function signalUrl(base: string | undefined, protocol: OtlpProtocol, signal: "metrics" | "logs"): string | undefined {
  if (base === undefined || protocol === "grpc") return base;
  return `${base.replace(/\/+$/, "")}/v1/${signal}`;
}
