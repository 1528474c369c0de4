/**
 * The OTLP push of a run, live or offline: a delivery per signal with the run's delivery
 * settings (OTEL_* and GPUSYNTH_OTLP_* variables), its outage and overflow reports, and the
 * closing line that says what became of everything queued.
 */
import { formatDuration } from "@gpusynth/blueprint";
import {
  type DeliveryConfig,
  DeliveryConfigError,
  type DeliveryEvents,
  type DeliveryStats,
  deliveryConfig,
  type OTLP_PROTOCOLS,
  OtlpLogsDelivery,
  OtlpMetricsDelivery,
  signalUrl,
} from "@gpusynth/emit";
import type { Output } from "../output.js";
import { UsageError } from "../usage.js";

/** Where a run pushes: the protocol, and the endpoint the flag or the environment gives. */
export interface OtlpTarget {
  readonly protocol: (typeof OTLP_PROTOCOLS)[number];
  readonly url: string;
}

export interface Deliveries {
  readonly metrics: OtlpMetricsDelivery;
  readonly logs: OtlpLogsDelivery | undefined;
}

/**
 * The OTLP push for both signals, each reporting the start and end of an outage once; `paced`
 * for an offline run, whose exports wait for the receiver (OtlpDeliveryOptions.paced);
 * `scrapeRoomMs` for a live run, whose scrapes wait for room within part of their interval
 * (OtlpDeliveryOptions.scrapeRoomMs).
 */
export function createDeliveries(
  otlp: OtlpTarget,
  explicitUrl: string | undefined,
  withLogs: boolean,
  output: Output,
  env: NodeJS.ProcessEnv,
  paced: boolean,
  scrapeRoomMs?: number,
): Deliveries {
  const delivery = (signal: "metrics" | "logs", unit: string) => {
    let config: DeliveryConfig;
    try {
      config = deliveryConfig(env, signal);
    } catch (error) {
      if (error instanceof DeliveryConfigError) throw new UsageError(error.message);
      throw error;
    }
    const url = signalUrl(explicitUrl, otlp.protocol, signal);
    const where = url ?? otlp.url;
    let refusals = 0;
    const events: DeliveryEvents = {
      onOutageStart: (error) =>
        output.err(
          `\nwarning: OTLP ${signal} export to ${where} failed (${error.message}); the run goes on, queuing up to ${formatBytes(config.queueBytes)} and retrying\n`,
        ),
      onOutageEnd: (r) =>
        output.err(
          `\ngpusynth: OTLP ${signal} delivery to ${where} resumed after ${formatDuration(r.durationMs)}: ${count(r.enqueued.items, unit)} queued meanwhile, ${count(r.delivered.items, unit)} delivered, ${count(r.dropped.items, unit)} dropped\n`,
        ),
      onOverflowStart: () =>
        output.err(
          `\nwarning: ${where} takes OTLP ${signal} more slowly than the run makes them; the queue is full (${formatBytes(config.queueBytes)}) and the oldest are dropped until it catches up\n`,
        ),
      onOverflowEnd: (r) =>
        output.err(
          `\ngpusynth: OTLP ${signal} queue caught up after ${formatDuration(r.durationMs)}: ${count(r.dropped.items, unit)} dropped while it was full\n`,
        ),
      onRejected: (error, request) => {
        if (refusals++ === 0)
          output.err(`\nwarning: ${where} refused ${count(request.items, unit)} (${error.message}); refused data is not retried\n`);
      },
    };
    return { protocol: otlp.protocol, url, config, events, paced, ...(scrapeRoomMs === undefined ? {} : { scrapeRoomMs }) };
  };
  return {
    metrics: new OtlpMetricsDelivery(delivery("metrics", "points")),
    logs: withLogs ? new OtlpLogsDelivery(delivery("logs", "log records")) : undefined,
  };
}

export function count(n: number, unit: string): string {
  return `${n.toLocaleString("en-US")} ${unit}`;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

/**
 * The closing report of a run's OTLP push: a line per signal on stderr, for a person, and the
 * same counts as data, for `--json`.
 */
export function reportDeliveries(output: Output, deliveries: Deliveries): DeliveriesJson {
  const metrics = deliveries.metrics.stats();
  const logs = deliveries.logs?.stats();
  output.err(`${deliveryLine("metrics", "points", metrics)}\n`);
  if (logs !== undefined) output.err(`${deliveryLine("logs", "log records", logs)}\n`);
  return { metrics: deliveryJson(metrics), ...(logs === undefined ? {} : { logs: deliveryJson(logs) }) };
}

/** What became of each signal's data (`--json`): points for the metrics, records for the logs. */
export interface DeliveriesJson {
  readonly metrics: DeliveryJson;
  readonly logs?: DeliveryJson;
}

/** What became of everything a signal queued: each figure counts its unit, `requests` the requests delivered. */
export interface DeliveryJson {
  readonly queued: number;
  readonly delivered: number;
  readonly requests: number;
  /** Dropped as the oldest while the queue was full. */
  readonly dropped: number;
  /** Refused by the receiver (not retried). */
  readonly refused: number;
  /** Still queued when the run ended. */
  readonly undelivered: number;
}

function deliveryJson(s: DeliveryStats): DeliveryJson {
  return {
    queued: s.enqueued.items,
    delivered: s.delivered.items,
    requests: s.delivered.requests,
    dropped: s.dropped.items,
    refused: s.rejected.items,
    undelivered: s.pending.items,
  };
}

/** What became of everything a signal queued, for the closing report. */
function deliveryLine(signal: string, unit: string, s: DeliveryStats): string {
  const lost = [
    s.dropped.items > 0 ? `${count(s.dropped.items, unit)} dropped (queue full)` : undefined,
    s.rejected.items > 0 ? `${count(s.rejected.items, unit)} refused by the receiver` : undefined,
    s.pending.items > 0 ? `${count(s.pending.items, unit)} undelivered at exit` : undefined,
  ].filter((part) => part !== undefined);
  const delivered = `${s.delivered.items.toLocaleString("en-US")} of ${count(s.enqueued.items, unit)} delivered in ${s.delivered.requests.toLocaleString("en-US")} requests`;
  return `gpusynth: OTLP ${signal}: ${delivered}; ${lost.length === 0 ? "nothing lost" : lost.join(", ")}`;
}
