/**
 * OTLP ExportMetricsServiceRequest in the OTLP JSON encoding: the SDK's JsonMetricsSerializer,
 * with the stale points (staleness.ts) written as the collector's prometheus receiver writes
 * them, `"flags": 1` and no value, which the SDK's DataPoint cannot say (it would write the NaN
 * as `null`).
 */

import { JsonMetricsSerializer } from "@opentelemetry/otlp-transformer";
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { FLAG_NO_RECORDED_VALUE, isNoRecordedValue } from "../staleness.js";

interface JsonPoint {
  asDouble?: unknown;
  asInt?: unknown;
  flags?: number;
}
interface JsonRequest {
  resourceMetrics: Array<{
    scopeMetrics: Array<{ metrics: Array<{ gauge?: { dataPoints: JsonPoint[] }; sum?: { dataPoints: JsonPoint[] } }> }>;
  }>;
}

const hasStalePoints = (metrics: ResourceMetrics): boolean =>
  metrics.scopeMetrics.some((s) =>
    s.metrics.some((m) => m.dataPoints.some((p) => typeof p.value === "number" && isNoRecordedValue(p as never))),
  );

export function serializeMetricsJson(metrics: ResourceMetrics): Uint8Array {
  const bytes = JsonMetricsSerializer.serializeRequest(metrics) ?? new Uint8Array();
  if (!hasStalePoints(metrics)) return bytes;
  // The SDK writes scopes, metrics and points in the order of the ResourceMetrics it is given.
  const request = JSON.parse(Buffer.from(bytes).toString("utf8")) as JsonRequest;
  const scopes = request.resourceMetrics[0]?.scopeMetrics ?? [];
  for (const [s, scope] of metrics.scopeMetrics.entries())
    for (const [m, metric] of scope.metrics.entries()) {
      const written = scopes[s]?.metrics[m];
      const points = written?.gauge?.dataPoints ?? written?.sum?.dataPoints ?? [];
      for (const [p, point] of metric.dataPoints.entries()) {
        const json = points[p];
        if (json === undefined || typeof point.value !== "number" || !isNoRecordedValue(point as never)) continue;
        delete json.asDouble;
        delete json.asInt;
        json.flags = FLAG_NO_RECORDED_VALUE;
      }
    }
  return new TextEncoder().encode(JSON.stringify(request));
}
