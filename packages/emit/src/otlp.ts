/**
 * OTLP endpoint and protocol, chosen the way OTel users expect:
 * OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL, then the specification's
 * default (DEFAULT_OTLP_PROTOCOL). Headers, compression and TLS come from the standard
 * OTEL_EXPORTER_OTLP_* variables, which the SDK's transports read themselves
 * (delivery/otlp-transport.ts); an explicit URL overrides the endpoint.
 */

export const OTLP_PROTOCOLS = ["grpc", "http/protobuf", "http/json"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/**
 * The protocol when none is configured: `http/protobuf`, as the specification asks of every SDK
 * without a stable release that chose gRPC ("If no configuration is provided the default
 * transport SHOULD be `http/protobuf`": opentelemetry-specification, specification/protocol/
 * exporter.md, Specify Protocol, at a74d4dac8f34e4a63efd68d2583d37db32c90ae2), and as the
 * OpenTelemetry JS SDK defaults (opentelemetry-js, experimental/packages/opentelemetry-sdk-node/
 * src/utils.ts, getOtlpProtocolFromEnv). It is also the cheaper way out of a large cluster: the SDK's gRPC
 * transport and grpc-js copy every request (bench/results/live-platform.md).
 */
export const DEFAULT_OTLP_PROTOCOL: OtlpProtocol = "http/protobuf";

/** The port the specification gives OTLP/gRPC (4318 is OTLP/HTTP's): an endpoint there is most likely a gRPC receiver. */
export const OTLP_GRPC_PORT = "4317";

export function isOtlpProtocol(value: string): value is OtlpProtocol {
  return (OTLP_PROTOCOLS as readonly string[]).includes(value);
}

/** The protocol the environment asks for, or undefined when it names none (or an unknown one). */
export function protocolFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  return env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
}

/** The OTLP endpoint the environment names for metrics; an empty variable counts as unset, as in the specification. */
export function endpointFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const set = (value: string | undefined) => (value === undefined || value.trim() === "" ? undefined : value);
  return set(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) ?? set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
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
