/**
 * OTLP endpoint and protocol, chosen the way OTel users expect:
 * OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL, then gRPC (gpusynth's
 * default). Headers, compression and TLS come from the standard OTEL_EXPORTER_OTLP_* variables,
 * which the SDK's transports read themselves (delivery/otlp-transport.ts); an explicit URL
 * overrides the endpoint.
 */

export const OTLP_PROTOCOLS = ["grpc", "http/protobuf", "http/json"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

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
