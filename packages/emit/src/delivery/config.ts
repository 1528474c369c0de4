/**
 * How OTLP delivery is bounded, from the environment: the standard OpenTelemetry variables where
 * one applies (OTEL_EXPORTER_OTLP_*_TIMEOUT, OTEL_BLRP_MAX_EXPORT_BATCH_SIZE,
 * OTEL_BLRP_MAX_QUEUE_SIZE), gpusynth's own where the specification has none (request and queue
 * sizes in bytes). docs/emission.md documents each.
 */
import { DEFAULT_TIMEOUT_MS, type Signal } from "./otlp-transport.js";

const MiB = 1024 * 1024;

/**
 * The OpenTelemetry Collector's OTLP gRPC receiver refuses messages over max_recv_msg_size_mib
 * (default 4, configgrpc) and grpc-js servers over 4 MiB (DEFAULT_MAX_RECEIVE_MESSAGE_LENGTH);
 * the collector's HTTP receiver allows 20 MiB by default (confighttp max_request_body_size).
 */
export const DEFAULT_MAX_REQUEST_BYTES = 4 * MiB;
/**
 * Per signal. Encoded as protobuf, lab.yaml at ×1 (15 s interval) sends about 1.1 MiB of metrics
 * and 0.4 MiB of logs (1,000 records) a minute, so 64 MiB holds about an hour of the default
 * blueprint's metrics through an outage (ten minutes would take 11 MiB); enterprise.yaml sends
 * 16 MiB of metrics a minute and needs GPUSYNTH_OTLP_QUEUE_BYTES raised for the same.
 */
export const DEFAULT_QUEUE_BYTES = 64 * MiB;
/** The specification's default for OTEL_BLRP_MAX_EXPORT_BATCH_SIZE. */
export const DEFAULT_LOG_BATCH_RECORDS = 512;
/** Requests in flight per signal: enough to keep a local collector busy, few enough to stay polite. */
export const MAX_IN_FLIGHT = 4;
/** How long a stopping run keeps delivering before it reports what is left. */
export const FLUSH_ON_EXIT_MS = 1000;

export interface DeliveryConfig {
  readonly maxRequestBytes: number;
  readonly queueBytes: number;
  readonly timeoutMs: number;
  /** Logs only: records per request, and an optional bound on queued records. */
  readonly logBatchRecords: number;
  readonly logQueueRecords?: number;
}

/** A delivery variable with a value gpusynth cannot use. */
export class DeliveryConfigError extends Error {
  override readonly name = "DeliveryConfigError";
}

function integer(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const value = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || value < min || value > max) {
    throw new DeliveryConfigError(`${name}: expected an integer from ${min} to ${max}, found "${text}"`);
  }
  return value;
}

/** The signal's own timeout variable wins over the shared one, as in the SDK. */
function timeoutVariable(env: NodeJS.ProcessEnv, signal: Signal): [string, string | undefined] {
  const own: [string, string | undefined] =
    signal === "metrics"
      ? ["OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", env.OTEL_EXPORTER_OTLP_METRICS_TIMEOUT]
      : ["OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", env.OTEL_EXPORTER_OTLP_LOGS_TIMEOUT];
  return own[1] !== undefined ? own : ["OTEL_EXPORTER_OTLP_TIMEOUT", env.OTEL_EXPORTER_OTLP_TIMEOUT];
}

/** The delivery settings for one signal; throws DeliveryConfigError naming the variable at fault. */
export function deliveryConfig(env: NodeJS.ProcessEnv, signal: Signal): DeliveryConfig {
  // 1 ms … 10 min: a Node timer holds any of these; longer would hold a dead request for ages.
  const timeoutMs = integer(...timeoutVariable(env, signal), 1, 600_000) ?? DEFAULT_TIMEOUT_MS;
  // A request must hold at least one large record; 1 GiB is far past any receiver's limit.
  const maxRequestBytes =
    integer("GPUSYNTH_OTLP_MAX_REQUEST_BYTES", env.GPUSYNTH_OTLP_MAX_REQUEST_BYTES, 64 * 1024, 1024 * MiB) ?? DEFAULT_MAX_REQUEST_BYTES;
  const queueBytes = integer("GPUSYNTH_OTLP_QUEUE_BYTES", env.GPUSYNTH_OTLP_QUEUE_BYTES, 0, 64 * 1024 * MiB) ?? DEFAULT_QUEUE_BYTES;
  const logBatchRecords =
    integer("OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", env.OTEL_BLRP_MAX_EXPORT_BATCH_SIZE, 1, 1_000_000) ?? DEFAULT_LOG_BATCH_RECORDS;
  const logQueueRecords = integer("OTEL_BLRP_MAX_QUEUE_SIZE", env.OTEL_BLRP_MAX_QUEUE_SIZE, 1, 100_000_000);
  return { maxRequestBytes, queueBytes, timeoutMs, logBatchRecords, ...(logQueueRecords === undefined ? {} : { logQueueRecords }) };
}
