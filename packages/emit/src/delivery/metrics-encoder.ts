/**
 * OTLP ExportMetricsServiceRequest protobuf, byte for byte what the SDK's
 * ProtobufMetricsSerializer (@opentelemetry/otlp-transformer, metrics-serializer.ts) writes for
 * the same ResourceMetrics — the same fields in the same order, zero-valued fields written or
 * left out as it does — at a fraction of its cost, because what repeats from one point and one
 * scrape to the next is encoded once and kept:
 *
 * - a series' attributes, in its label set (catalogue.ts `SERIES_LABELS`, `KEPT_OTLP`): a source
 *   that keeps a label set from one scrape to the next, or shares it between families, has them
 *   written as one copy;
 * - otherwise each key and value's encoded `KeyValue`, looked up instead of written byte by byte
 *   (a target's points share a handful of keys and values: the GPU's, the node's, the pod's);
 * - a metric's name, description and unit, per descriptor (the MetricProducer keeps one per family);
 * - the Resource and the instrumentation scope, per object (one per target for a run's life);
 * - the scrape's start and end times, per scrape.
 *
 * Messages are written back to front (protobuf-writer.ts), so every length is known when its
 * prefix is written: one pass, no size estimate.
 *
 * One addition the SDK cannot make: a stale point (staleness.ts) is written as the collector's
 * prometheus receiver writes it, with the NoRecordedValue flag and no value.
 *
 * What gpusynth never produces — histograms, exponential histograms, attribute values other
 * than strings, numbers and booleans — is left to the SDK's serializer (encode returns
 * undefined). The JSON encoding is the SDK's (json-metrics.ts).
 */

import { KEPT_OTLP, SERIES_LABELS } from "@gpusynth/constructs";
import type { Attributes, AttributeValue, HrTime } from "@opentelemetry/api";
import { ValueType } from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  type DataPoint,
  DataPointType,
  type MetricData,
  type ResourceMetrics,
  type ScopeMetrics,
} from "@opentelemetry/sdk-metrics";
import { type ColumnMetric, columnMetricOf } from "../column-metric.js";
import { FLAG_NO_RECORDED_VALUE, isNoRecordedValue } from "../staleness.js";
import {
  encodePart,
  keptPart,
  partWriter,
  type Scope,
  Unsupported,
  writeKeyValue,
  writeResourceField,
  writeScopeField,
} from "./otlp-common.js";
import { hrTimeHalves, int64Halves, ReverseWriter, tag } from "./protobuf-writer.js";

type Descriptor = MetricData["descriptor"];

/** The SDK serializer's field numbers (opentelemetry-proto metrics.proto, common.proto, resource.proto). */
const REQUEST_RESOURCE_METRICS = tag(1, 2);
const RESOURCE_METRICS_RESOURCE = tag(1, 2);
const RESOURCE_METRICS_SCOPE_METRICS = tag(2, 2);
const RESOURCE_METRICS_SCHEMA_URL = tag(3, 2);
const SCOPE_METRICS_SCOPE = tag(1, 2);
const SCOPE_METRICS_METRICS = tag(2, 2);
const SCOPE_METRICS_SCHEMA_URL = tag(3, 2);
const METRIC_NAME = tag(1, 2);
const METRIC_DESCRIPTION = tag(2, 2);
const METRIC_UNIT = tag(3, 2);
const METRIC_GAUGE = tag(5, 2);
const METRIC_SUM = tag(7, 2);
const DATA_POINTS = tag(1, 2);
const SUM_TEMPORALITY = tag(2, 0);
const SUM_MONOTONIC = tag(3, 0);
const POINT_START_TIME = tag(2, 1);
const POINT_TIME = tag(3, 1);
const POINT_AS_DOUBLE = tag(4, 1);
const POINT_AS_INT = tag(6, 1);
const POINT_ATTRIBUTES = tag(7, 2);
const POINT_FLAGS = tag(8, 0);

/**
 * Points written per generation of kept attributes. Label values churn with pods, so an entry is
 * kept while it is used at least once every one to two generations: a scrape's whole working set
 * where a scrape has fewer points (4,096 GPUs: ~200,000 a scrape), and at hyperscale what recurs
 * within a family's run over every pod. Memory stays bounded by the values of 2 generations.
 */
const GENERATION_POINTS = 1 << 21;

/**
 * An attribute's encoded KeyValue, kept as a string of one character per byte
 * (ReverseWriter.latin1Since): one compact heap object, where a Uint8Array of its own over 64
 * bytes costs a view, a buffer and memory outside V8's heap whose allocation and finalisation cost
 * more than the encoding (kube-state-metrics at 102,400 GPUs meets ~580,000 distinct label values a
 * scrape). A label set keeps its bytes the same way.
 */
function encodeKeyValue(key: string, value: AttributeValue | undefined): string {
  partWriter.reset();
  writeKeyValue(partWriter, POINT_ATTRIBUTES, key, value);
  return partWriter.latin1Since(0);
}

export class MetricsEncoder {
  private readonly writer = new ReverseWriter();
  /** key → value → the point's encoded `attributes` entry. */
  private pointAttributes = new Map<string, Map<string, string>>();
  /** The generation before: an entry used again moves to the current one, the rest go with it. */
  private lastAttributes = new Map<string, Map<string, string>>();
  private pointsInGeneration = 0;
  private readonly resources = new WeakMap<Resource, Uint8Array>();
  private readonly scopes = new WeakMap<Scope, Uint8Array>();
  private readonly metricHeads = new WeakMap<Descriptor, Uint8Array>();
  /** A point's attribute entries, gathered front to back and written back to front. */
  private readonly entries: string[] = [];
  private readonly times = new TimeCache();

  /** The request's bytes, or undefined when it holds what only the SDK's serializer writes. */
  encode(metrics: ResourceMetrics): Uint8Array | undefined {
    return this.writeRequest(metrics) ? this.writer.finish() : undefined;
  }

  /**
   * encode's bytes as a view of the memory they were written into, valid until the encoder's next
   * encode: for a caller that keeps them where they are to stay (requests.ts), or only needs their
   * size. Given `into` (a request slab's free part), they are written at its end, where the slab
   * keeps them without a copy; else, or when they outgrow it, into the encoder's own buffer.
   */
  encodeTransient(metrics: ResourceMetrics, into?: Uint8Array): Uint8Array | undefined {
    return this.writeRequest(metrics, into) ? this.writer.written() : undefined;
  }

  /** Writes the request into the encoder's writer; false when it holds what only the SDK's serializer writes. */
  private writeRequest(metrics: ResourceMetrics, into?: Uint8Array): boolean {
    const w = this.writer;
    w.reset(into);
    try {
      const end = w.mark();
      const schemaUrl = metrics.resource.schemaUrl;
      if (schemaUrl) {
        w.string(schemaUrl);
        w.byte(RESOURCE_METRICS_SCHEMA_URL);
      }
      for (let s = metrics.scopeMetrics.length - 1; s >= 0; s--) this.writeScopeMetrics(metrics.scopeMetrics[s] as ScopeMetrics);
      w.bytes(this.resourceField(metrics.resource));
      w.delimit(REQUEST_RESOURCE_METRICS, end);
      return true;
    } catch (error) {
      if (error instanceof Unsupported) return false;
      throw error;
    }
  }

  private writeScopeMetrics(scopeMetrics: ScopeMetrics): void {
    const w = this.writer;
    const end = w.mark();
    if (scopeMetrics.scope.schemaUrl) {
      w.string(scopeMetrics.scope.schemaUrl);
      w.byte(SCOPE_METRICS_SCHEMA_URL);
    }
    for (let m = scopeMetrics.metrics.length - 1; m >= 0; m--) this.writeMetric(scopeMetrics.metrics[m] as MetricData);
    w.bytes(this.scopeField(scopeMetrics.scope));
    w.delimit(RESOURCE_METRICS_SCOPE_METRICS, end);
  }

  private writeMetric(metric: MetricData): void {
    const w = this.writer;
    const end = w.mark();
    const dataEnd = w.mark();
    const int = metric.descriptor.valueType === ValueType.INT;
    if (metric.dataPointType === DataPointType.SUM) {
      if (metric.isMonotonic) {
        w.uint32(1);
        w.byte(SUM_MONOTONIC);
      }
      const temporality = protoTemporality(metric.aggregationTemporality);
      if (temporality !== 0) {
        w.uint32(temporality);
        w.byte(SUM_TEMPORALITY);
      }
      this.writePointsOf(metric, int);
      w.delimit(METRIC_SUM, dataEnd);
    } else if (metric.dataPointType === DataPointType.GAUGE) {
      this.writePointsOf(metric, int);
      w.delimit(METRIC_GAUGE, dataEnd);
    } else {
      throw new Unsupported("a histogram");
    }
    w.bytes(this.metricHead(metric.descriptor));
    w.delimit(SCOPE_METRICS_METRICS, end);
  }

  /** The metric's points: read from its columns where it is a scrape's (column-metric.ts), without a DataPoint each. */
  private writePointsOf(metric: MetricData, int: boolean): void {
    const columns = columnMetricOf(metric);
    if (columns === undefined) this.writePoints(metric.dataPoints as DataPoint<number>[], int);
    else this.writeColumnPoints(columns, int);
  }

  private writePoints(points: readonly DataPoint<number>[], int: boolean): void {
    this.age(points.length);
    for (let p = points.length - 1; p >= 0; p--) this.writePoint(points[p] as DataPoint<number>, int);
  }

  private writeColumnPoints(metric: ColumnMetric, int: boolean): void {
    this.age(metric.pointCount);
    const { attributes, values, count, startTime, endTime } = metric.columns;
    const times = this.times.block(startTime, endTime);
    for (let p = metric.to - 1; p >= metric.from; p--) {
      if (p < count && this.wroteCommon(attributes[p], values[p] as number, times, int)) continue;
      this.writePoint(metric.pointAt(p), int);
    }
  }

  /** The common point, a double and a label set's kept bytes, written in one go; false for any other. */
  private wroteCommon(attributes: Attributes | undefined, value: number, times: Uint8Array, int: boolean): boolean {
    const kept = (attributes as (Attributes & { [KEPT_OTLP]?: string }) | undefined)?.[KEPT_OTLP];
    if (kept === undefined || int || Number.isNaN(value)) return false;
    this.writer.numberPoint(DATA_POINTS, times, POINT_AS_DOUBLE, value, kept);
    return true;
  }

  private writePoint(point: DataPoint<number>, int: boolean): void {
    const w = this.writer;
    const times = this.times.block(point.startTime, point.endTime);
    if (this.wroteCommon(point.attributes, point.value, times, int)) return;
    const attributes = point.attributes as (Attributes & { [KEPT_OTLP]?: string }) | undefined;
    const kept = attributes?.[KEPT_OTLP];
    const end = w.mark();
    const stale = isNoRecordedValue(point);
    if (stale) {
      // As the receiver writes a stale marker: the flag and no value (it follows the attributes).
      w.uint32(FLAG_NO_RECORDED_VALUE);
      w.byte(POINT_FLAGS);
    }
    if (kept !== undefined) w.latin1(kept);
    else if (attributes) this.writeAttributesOf(attributes);
    if (!stale && int) {
      const [low, high] = int64Halves(point.value);
      w.fixed64(low, high);
      w.byte(POINT_AS_INT);
    } else if (!stale) {
      w.double(point.value);
      w.byte(POINT_AS_DOUBLE);
    }
    w.bytes(times);
    w.delimit(DATA_POINTS, end);
  }

  /** A point's attributes from their KeyValues kept one by one; a series' label set keeps them together. */
  private writeAttributesOf(attributes: Attributes & { [KEPT_OTLP]?: string }): void {
    const w = this.writer;
    const entries = this.entries;
    const mark = w.mark();
    // Written over from the start (emptied with `length = 0`, V8 would let go of its storage).
    let count = 0;
    for (const key in attributes) {
      if (!Object.hasOwn(attributes, key)) continue;
      entries[count++] = this.pointAttribute(key, attributes[key]);
    }
    for (let i = count - 1; i >= 0; i--) w.latin1(entries[i] as string);
    // A series' label set keeps its bytes, in a slot hidden from walks of its keys and from spreads.
    if (Object.getPrototypeOf(attributes) === SERIES_LABELS)
      Object.defineProperty(attributes, KEPT_OTLP, { value: w.latin1Since(mark), enumerable: false });
  }

  private pointAttribute(key: string, value: AttributeValue | undefined): string {
    if (typeof value !== "string") return encodeKeyValue(key, value);
    const entry = this.pointAttributes.get(key)?.get(value);
    if (entry !== undefined) return entry;
    const kept = this.lastAttributes.get(key)?.get(value) ?? encodeKeyValue(key, value);
    let values = this.pointAttributes.get(key);
    if (values === undefined) {
      values = new Map();
      this.pointAttributes.set(key, values);
    }
    values.set(value, kept);
    return kept;
  }

  /** Starts a new generation of kept attributes once enough points were written: what the last one used survives. */
  private age(points: number): void {
    this.pointsInGeneration += points;
    if (this.pointsInGeneration < GENERATION_POINTS) return;
    this.lastAttributes = this.pointAttributes;
    this.pointAttributes = new Map();
    this.pointsInGeneration = 0;
  }

  private resourceField(resource: Resource): Uint8Array {
    return keptPart(this.resources, resource, writeResource);
  }

  private scopeField(scope: Scope): Uint8Array {
    return keptPart(this.scopes, scope, writeScope);
  }

  private metricHead(descriptor: Descriptor): Uint8Array {
    return keptPart(this.metricHeads, descriptor, writeMetricHead);
  }
}

const writeResource = (w: ReverseWriter, resource: Resource): void => writeResourceField(w, resource, RESOURCE_METRICS_RESOURCE);
const writeScope = (w: ReverseWriter, scope: Scope): void => writeScopeField(w, scope, SCOPE_METRICS_SCOPE);

/** A metric's name, description and unit: the fields before its data. */
function writeMetricHead(w: ReverseWriter, descriptor: Descriptor): void {
  if (descriptor.unit) {
    w.string(descriptor.unit);
    w.byte(METRIC_UNIT);
  }
  if (descriptor.description) {
    w.string(descriptor.description);
    w.byte(METRIC_DESCRIPTION);
  }
  w.string(descriptor.name);
  w.byte(METRIC_NAME);
}

/**
 * A point's start and end time fields (tags and fixed64s: 18 bytes), kept for the last pair met:
 * a scrape's points share theirs. Compared by value, not by object: a target's producer keeps one
 * end-time array and sets it again at each scrape (target-provider.ts).
 */
class TimeCache {
  private start: HrTime = [Number.NaN, Number.NaN];
  private end: HrTime = [Number.NaN, Number.NaN];
  private kept: Uint8Array = new Uint8Array(0);

  block(start: HrTime, end: HrTime): Uint8Array {
    if (start[0] !== this.start[0] || start[1] !== this.start[1] || end[0] !== this.end[0] || end[1] !== this.end[1]) {
      this.kept = encodePart(writeTimes, { start, end });
      this.start = [start[0], start[1]];
      this.end = [end[0], end[1]];
    }
    return this.kept;
  }
}

/**
 * A point's end and start time fields, as the SDK writes them (end first: written back to front).
 * A function of its own, handed the times: a closure in TimeCache.block capturing them had V8 make
 * a context at every call of block, once per point (about 50 bytes of garbage each).
 */
function writeTimes(w: ReverseWriter, { start, end }: { readonly start: HrTime; readonly end: HrTime }): void {
  const [endLow, endHigh] = hrTimeHalves(end[0], end[1]);
  w.fixed64(endLow, endHigh);
  w.byte(POINT_TIME);
  const [startLow, startHigh] = hrTimeHalves(start[0], start[1]);
  w.fixed64(startLow, startHigh);
  w.byte(POINT_START_TIME);
}

function protoTemporality(temporality: AggregationTemporality): number {
  if (temporality === AggregationTemporality.DELTA) return 1;
  if (temporality === AggregationTemporality.CUMULATIVE) return 2;
  return 0;
}
