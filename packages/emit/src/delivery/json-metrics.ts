/**
 * OTLP ExportMetricsServiceRequest in the OTLP JSON encoding, written as the SDK's
 * JsonMetricsSerializer writes it (@opentelemetry/otlp-transformer: JSON.stringify of its
 * `createExportMetricsServiceRequest`, the JSON encoder's timestamps as decimal strings) — the same
 * keys in the same order, the same numbers — with two differences:
 * - the stale points (staleness.ts) are written as the collector's prometheus receiver writes
 *   them, `"flags": 1` and no value, which the SDK's DataPoint cannot say (it would write the
 *   NaN as `null`);
 * - a series' attributes are written once and kept with its label set (catalogue.ts
 *   `SERIES_LABELS`, `KEPT_JSON`), as the protobuf encoder keeps their bytes: the SDK builds every
 *   point's objects and stringifies them anew, several times slower.
 * packages/emit/test/metrics-encoder.test.ts compares the two on every shipped blueprint.
 */

import { flattened, KEPT_JSON, SERIES_LABELS } from "@gpusynth/constructs";
import { type Attributes, ValueType } from "@opentelemetry/api";
import type { DataPoint, MetricData, ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { AggregationTemporality, DataPointType } from "@opentelemetry/sdk-metrics";
import { type ColumnMetric, columnMetricOf } from "../column-metric.js";
import { FLAG_NO_RECORDED_VALUE, isNoRecordedValue } from "../staleness.js";
import { hrTimeJson, keyValuesJson, numberJson, resourceJson, scopeJson } from "./json-common.js";

/** The request as OTLP JSON bytes (UTF-8). */
export function serializeMetricsJson(metrics: ResourceMetrics): Uint8Array {
  return Buffer.from(metricsJson(metrics), "utf8");
}

/** The request as an OTLP JSON string (one line: an OTLP-JSON file's line). */
export function metricsJson(metrics: ResourceMetrics): string {
  const { resource } = metrics;
  // The SDK writes a resource's schema URL twice: in the resource, and after it in ResourceMetrics.
  const schemaUrl =
    resource.schemaUrl !== undefined && resource.schemaUrl !== "" ? `,"schemaUrl":${JSON.stringify(resource.schemaUrl)}` : "";
  let out = `{"resourceMetrics":[{"resource":${resourceJson(resource)}${schemaUrl}`;
  out += ',"scopeMetrics":[';
  metrics.scopeMetrics.forEach((scope, s) => {
    if (s > 0) out += ",";
    out += `{"scope":${scopeJson(scope.scope)},"metrics":[`;
    scope.metrics.forEach((metric, m) => {
      if (m > 0) out += ",";
      out += metricJson(metric);
    });
    out += "]";
    if (scope.scope.schemaUrl !== undefined) out += `,"schemaUrl":${JSON.stringify(scope.scope.schemaUrl)}`;
    out += "}";
  });
  return `${out}]}]}`;
}

function metricJson(metric: MetricData): string {
  const { name, description, unit, valueType } = metric.descriptor;
  let out = `{"name":${JSON.stringify(name)},"description":${JSON.stringify(description)},"unit":${JSON.stringify(unit)},`;
  if (metric.dataPointType === DataPointType.SUM)
    // AGGREGATION_TEMPORALITY_CUMULATIVE is 2, DELTA 1 (the SDK's EAggregationTemporality).
    out += `"sum":{"aggregationTemporality":${metric.aggregationTemporality === AggregationTemporality.DELTA ? 1 : 2},"isMonotonic":${metric.isMonotonic},"dataPoints":[`;
  else if (metric.dataPointType === DataPointType.GAUGE) out += '"gauge":{"dataPoints":[';
  else throw new Error(`${name}: only sums and gauges are written (a ${metric.dataPointType} came)`);
  const valueKey = valueType === ValueType.INT ? '"asInt"' : '"asDouble"';
  const columns = columnMetricOf(metric);
  if (columns !== undefined) return `${out}${columnPointsJson(columns, valueKey)}]}}`;
  const points = metric.dataPoints as DataPoint<number>[];
  for (let i = 0; i < points.length; i++) {
    if (i > 0) out += ",";
    out += pointJson(points[i] as DataPoint<number>, valueKey);
  }
  return `${out}]}}`;
}

function pointJson(point: DataPoint<number>, valueKey: string): string {
  const times = timesJson(point.startTime, point.endTime);
  if (isNoRecordedValue(point as never)) return pointText(point.attributes, times, `"flags":${FLAG_NO_RECORDED_VALUE}`);
  return pointText(point.attributes, times, `${valueKey}:${numberJson(point.value)}`);
}

/** A scrape metric's points read from its columns (column-metric.ts), without a DataPoint each. */
function columnPointsJson(metric: ColumnMetric, valueKey: string): string {
  const { attributes, values, count, startTime, endTime } = metric.columns;
  const times = timesJson(startTime, endTime);
  let out = "";
  for (let at = metric.from; at < metric.to; at++) {
    if (at > metric.from) out += ",";
    if (at >= count) out += pointJson(metric.pointAt(at), valueKey);
    else out += pointText(attributes[at] as Attributes, times, `${valueKey}:${numberJson(values[at] as number)}`);
  }
  return out;
}

/** A point's JSON: its attributes, its times (timesJson), and its value or flags. */
function pointText(attributes: Attributes, times: string, value: string): string {
  return `{"attributes":${attributesJson(attributes)},${times},${value}}`;
}

function timesJson(start: readonly [number, number], end: readonly [number, number]): string {
  return `"startTimeUnixNano":"${nanos(start)}","timeUnixNano":"${nanos(end)}"`;
}

/**
 * An HrTime as the SDK's JSON encoder writes it: its nanoseconds since the epoch, in decimal. The
 * points of a scrape share their time (and a series' start is met again at every scrape): the
 * last few are remembered, by value (a target's producer sets one end-time array again at each
 * scrape: target-provider.ts).
 */
function nanos(time: readonly [number, number]): string {
  for (const [known, text] of recentTimes) if (known[0] === time[0] && known[1] === time[1]) return text;
  const text = hrTimeJson(time);
  recentTimes.unshift([[time[0], time[1]], text]);
  if (recentTimes.length > 4) recentTimes.pop();
  return text;
}
const recentTimes: [readonly [number, number], string][] = [];

/** `[{"key":…,"value":{…}},…]`, kept with a series' label set. */
function attributesJson(attributes: Attributes & { [KEPT_JSON]?: string }): string {
  const kept = attributes[KEPT_JSON];
  if (kept !== undefined) return kept;
  const out = flattened(keyValuesJson(attributes));
  if (Object.getPrototypeOf(attributes) === SERIES_LABELS) Object.defineProperty(attributes, KEPT_JSON, { value: out, enumerable: false });
  return out;
}
