/**
 * OTLP export requests encoded once — in protobuf by gpusynth's encoders, byte for byte the SDK
 * serializers' output (metrics-encoder.ts, logs-encoder.ts), in JSON by the SDK's serializers
 * (metrics as json-metrics.ts writes the SDK's JSON) — and split so that none is larger than a receiver accepts. The OpenTelemetry Collector's OTLP receiver (gRPC server
 * default max_recv_msg_size_mib 4) and grpc-js both refuse a message over 4 MiB; a live run at
 * `--speed 60` produced 6 MB log requests before requests were split.
 *
 * A request keeps its encoded bytes: the retry queue counts them against its bound, and a retry
 * sends them again without encoding anything twice.
 */

import { ProtobufLogsSerializer, ProtobufMetricsSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import type { MetricData, ResourceMetrics, ScopeMetrics } from "@opentelemetry/sdk-metrics";
import { columnMetricOf, pointCountOf } from "../column-metric.js";
import { JsonLogsEncoder } from "./json-logs.js";
import { serializeMetricsJson } from "./json-metrics.js";
import { LogsEncoder } from "./logs-encoder.js";
import { MetricsEncoder } from "./metrics-encoder.js";
import type { QueuedRequest } from "./queue.js";

/** How requests are encoded on the wire: protobuf for grpc and http/protobuf, JSON for http/json. */
export type Encoding = "protobuf" | "json";

export interface EncodedRequest extends QueuedRequest {
  readonly body: Uint8Array;
}

/**
 * Where requests' bytes are kept. By default each in an array of its own; a delivery keeps them in
 * memory it reuses (request-slabs.ts), as a worker thread does in memory the run's thread reads
 * (shared-slabs.ts).
 */
export interface RequestMemory {
  /**
   * Bytes of the request's own, given bytes valid only until the next encoding (where the encoder
   * wrote them): a copy, or the same bytes, kept where they are, when they end `room()`.
   */
  hold(transient: Uint8Array): Uint8Array;
  /**
   * Free memory to encode the next request into, at its end, so that `hold` keeps it there without
   * copying it (gpusynth's protobuf encoder does; a request that outgrows it is copied as any other).
   */
  room?(): Uint8Array | undefined;
}

const COPY_OUT: RequestMemory = { hold: (transient) => Uint8Array.prototype.slice.call(transient) };
/** For bytes made anew at each encoding (the JSON writer's, the SDK serializers'): already the request's own. */
const OWN_BYTES: RequestMemory = { hold: (bytes) => bytes };

/** The requests, and how many items could not be sent at any split (one item alone over the limit). */
export interface Encoded {
  readonly requests: EncodedRequest[];
  readonly oversized: number;
}

/** One per thread: its caches serve every target and scrape the thread encodes. */
const protobufMetrics = new MetricsEncoder();

/**
 * A request's bytes: gpusynth's encoder, the SDK's serializer for what it leaves, JSON as
 * json-metrics.ts writes it. gpusynth's encoder writes into `into` where given (the request
 * memory's room) and hands a view of what it wrote, valid until its next encoding: encodeWithin
 * holds a request's bytes before it encodes another, so they are written once, where they are
 * to stay, or copied there once.
 */
function serializeMetrics(metrics: ResourceMetrics, encoding: Encoding, into?: Uint8Array): Uint8Array {
  if (encoding === "json") return serializeMetricsJson(metrics);
  return protobufMetrics.encodeTransient(metrics, into) ?? ProtobufMetricsSerializer.serializeRequest(metrics) ?? new Uint8Array();
}

const protobufLogs = new LogsEncoder();
const jsonLogs = new JsonLogsEncoder();

/** A request's bytes, made anew (the request's own): gpusynth's encoders, the SDK's serializer for what the protobuf one leaves. */
function serializeLogs(records: ReadableLogRecord[], encoding: Encoding): Uint8Array {
  if (encoding === "json") return Buffer.from(jsonLogs.encode(records), "utf8");
  return protobufLogs.encode(records) ?? ProtobufLogsSerializer.serializeRequest(records) ?? new Uint8Array();
}

/**
 * Encodes the items [from, to) — data points or log records — as requests of at most `maxBytes`
 * each. The first encoding gives the average size per item; parts are cut to that average with
 * 10 % headroom and a part still too large is split again, so most items are encoded twice at most.
 * `encodeRange`'s bytes need only last until its next call: a request's are held when it is made.
 */
function encodeWithin(
  encodeRange: (from: number, to: number) => Uint8Array,
  memory: RequestMemory,
  maxBytes: number,
  key: string | undefined,
  from: number,
  to: number,
  out: { requests: EncodedRequest[]; oversized: number },
  body: Uint8Array = encodeRange(from, to),
): void {
  const length = to - from;
  if (body.byteLength <= maxBytes) {
    out.requests.push({ body: memory.hold(body), bytes: body.byteLength, items: length, ...(key === undefined ? {} : { key }) });
  } else if (length <= 1) {
    out.oversized += length;
  } else {
    const parts = Math.min(length, Math.max(2, Math.ceil((body.byteLength / maxBytes) * 1.1)));
    const size = Math.ceil(length / parts);
    for (let start = from; start < to; start += size)
      encodeWithin(encodeRange, memory, maxBytes, key, start, Math.min(to, start + size), out);
  }
}

/** A target's scrape as requests of at most `maxBytes`; its points are split across requests when needed. */
export function encodeMetrics(
  metrics: ResourceMetrics,
  encoding: Encoding,
  maxBytes: number,
  key?: string,
  memory: RequestMemory = encoding === "json" ? OWN_BYTES : COPY_OUT,
): Encoded {
  return allOf(encodeMetricsParts(metrics, encoding, maxBytes, key, memory));
}

/**
 * encodeMetrics part by part: the requests of a target cut by its first points' size come a part
 * (a request or two) at a time, each encoded only when the one before has been taken, so a consumer
 * that waits between parts (a live scrape's delivery, otlp-delivery.ts) holds one part's bytes
 * rather than the whole target's (Run:ai's exporter of platform.yaml: about 40 MB).
 */
export function encodeMetricsParts(
  metrics: ResourceMetrics,
  encoding: Encoding,
  maxBytes: number,
  key?: string,
  memory: RequestMemory = encoding === "json" ? OWN_BYTES : COPY_OUT,
): Generator<Encoded> {
  // Only gpusynth's protobuf encoder writes into the memory's room; JSON is made anew and copied in.
  const room = encoding === "protobuf" ? () => memory.room?.() : () => undefined;
  return splitMetricsParts(metrics, (part) => serializeMetrics(part, encoding, room()), maxBytes, key, memory);
}

/** encodeMetrics with the serializer given (its bytes valid until its next call): the same split whichever encodes the parts. */
export function splitMetrics(
  metrics: ResourceMetrics,
  encode: (part: ResourceMetrics) => Uint8Array,
  maxBytes: number,
  key?: string,
  memory: RequestMemory = COPY_OUT,
): Encoded {
  return allOf(splitMetricsParts(metrics, encode, maxBytes, key, memory));
}

/** The requests of every part, in order (most targets are one part: its own, uncopied). */
function allOf(parts: Iterable<Encoded>): Encoded {
  let all: { requests: EncodedRequest[]; oversized: number } | undefined;
  for (const { requests, oversized } of parts) {
    if (all === undefined) {
      all = { requests, oversized };
      continue;
    }
    for (const request of requests) all.requests.push(request);
    all.oversized += oversized;
  }
  return all ?? { requests: [], oversized: 0 };
}

/** splitMetrics part by part (encodeMetricsParts). */
function* splitMetricsParts(
  metrics: ResourceMetrics,
  encode: (part: ResourceMetrics) => Uint8Array,
  maxBytes: number,
  key?: string,
  memory: RequestMemory = COPY_OUT,
): Generator<Encoded> {
  const points = pointsOf(metrics);
  let spans: MetricSpan[] | undefined;
  const encodeRange = (from: number, to: number) => {
    spans ??= spansOf(metrics);
    return encode(pointRange(metrics, spans, from, to));
  };
  // A target far over the limit (Run:ai's exporter at 100,000 GPUs: ~800k points, ~150 MB) is cut
  // by the size its first points encode to, not encoded whole first only to learn its size.
  if (points > SAMPLED_ABOVE) {
    const perPoint = encodeRange(0, SAMPLE_POINTS).byteLength / SAMPLE_POINTS;
    const parts = Math.ceil(((perPoint * points) / maxBytes) * 1.1);
    if (parts > 1) {
      const size = Math.ceil(points / parts);
      for (let start = 0; start < points; start += size) {
        const out = { requests: [], oversized: 0 };
        encodeWithin(encodeRange, memory, maxBytes, key, start, Math.min(points, start + size), out);
        yield out;
      }
      return;
    }
  }
  const out = { requests: [], oversized: 0 };
  encodeWithin(encodeRange, memory, maxBytes, key, 0, points, out, encode(metrics));
  yield out;
}

/**
 * A scrape cut into parts of at most `maxPoints` points each, in its order (the scrape itself
 * when it holds no more): where a line of OTLP JSON must stay one string (wire.ts).
 */
export function pointParts(metrics: ResourceMetrics, maxPoints: number): ResourceMetrics[] {
  const points = pointsOf(metrics);
  if (points <= maxPoints) return [metrics];
  const spans = spansOf(metrics);
  const parts: ResourceMetrics[] = [];
  for (let from = 0; from < points; from += maxPoints) parts.push(pointRange(metrics, spans, from, Math.min(points, from + maxPoints)));
  return parts;
}

/** Points encoded to estimate a large target's size before cutting it into requests. */
const SAMPLE_POINTS = 1_024;

/**
 * Targets of more points than this are sized by a sample first; a smaller one is encoded whole,
 * and only one over the limit (over 512 bytes a point) is encoded again in parts. The sample costs
 * at most an eighth of a sampled target's encoding: sampling every target over 1,024 points
 * encoded a node-exporter of 2,048 (a node of 256 logical CPUs, 8 series each) half again, and
 * node-exporter is two thirds of enterprise's points.
 */
const SAMPLED_ABOVE = 8 * SAMPLE_POINTS;

/** How many data points a scrape holds. */
export function pointsOf(metrics: ResourceMetrics): number {
  let points = 0;
  for (const scope of metrics.scopeMetrics) for (const metric of scope.metrics) points += pointCountOf(metric);
  return points;
}

/** A metric of a scrape, with its scope's index and the index of its first point in the scrape. */
interface MetricSpan {
  readonly scope: number;
  readonly metric: MetricData;
  readonly first: number;
}

function spansOf(metrics: ResourceMetrics): MetricSpan[] {
  const spans: MetricSpan[] = [];
  let first = 0;
  metrics.scopeMetrics.forEach((scope, s) => {
    for (const metric of scope.metrics) {
      spans.push({ scope: s, metric, first });
      first += pointCountOf(metric);
    }
  });
  return spans;
}

/** The ResourceMetrics holding only the points [from, to) of the scrape, in its order; metrics without any left out. */
function pointRange(metrics: ResourceMetrics, spans: readonly MetricSpan[], from: number, to: number): ResourceMetrics {
  const scopes: ScopeMetrics[] = [];
  let lastScope = -1;
  for (const { scope, metric, first } of spans) {
    const count = pointCountOf(metric);
    if (count === 0 || first + count <= from || first >= to) continue;
    if (scope !== lastScope) {
      scopes.push({ scope: (metrics.scopeMetrics[scope] as ScopeMetrics).scope, metrics: [] });
      lastScope = scope;
    }
    const start = Math.max(from, first) - first;
    const end = Math.min(to, first + count) - first;
    (scopes[scopes.length - 1] as ScopeMetrics).metrics.push(start === 0 && end === count ? metric : metricRange(metric, start, end));
  }
  return { resource: metrics.resource, scopeMetrics: scopes };
}

/** The metric holding only its points [start, end): a scrape's as a range of its columns, without making its DataPoints. */
function metricRange(metric: MetricData, start: number, end: number): MetricData {
  const columns = columnMetricOf(metric);
  if (columns !== undefined) return columns.range(start, end) as MetricData;
  return { ...metric, dataPoints: metric.dataPoints.slice(start, end) } as MetricData;
}

/**
 * Log records as requests of at most `maxRecords` records (OTEL_BLRP_MAX_EXPORT_BATCH_SIZE) and
 * `maxBytes` bytes each, in the order given.
 */
export function encodeLogs(records: readonly ReadableLogRecord[], encoding: Encoding, maxRecords: number, maxBytes: number): Encoded {
  const out = { requests: [], oversized: 0 };
  for (let start = 0; start < records.length; start += maxRecords) {
    const batch = records.slice(start, start + maxRecords);
    // Either encoding makes new bytes each time: they are the request's own.
    encodeWithin((from, to) => serializeLogs(batch.slice(from, to), encoding), OWN_BYTES, maxBytes, undefined, 0, batch.length, out);
  }
  return out;
}
