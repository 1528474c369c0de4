/**
 * Requests split to fit a receiver: a real run's scrapes and log records, encoded by the SDK's
 * serializers under a small limit, decode (with the code generated from the OTLP .proto files)
 * back to exactly what went in — every point and record once — with no request over
 * the limit.
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { emitOffline, encodeLogs, encodeMetrics, type LogsSink, MetricsEncoder, type MetricsSink, metricsKept } from "@gpusynth/emit";
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { beforeAll, describe, expect, it } from "vitest";
import { pointsOf, splitMetrics } from "../src/delivery/requests.js";

const require = createRequire(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: generated protobuf code has no types we can import
const root: any = require("otlp-proto-root/build/src/generated/root");
const MetricsRequest = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
const LogsRequest = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;

const lab = fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url));

interface DecodedPoint {
  metric: string;
  attributes: string;
  value: number;
}

function metricPoints(body: Uint8Array): DecodedPoint[] {
  const request = MetricsRequest.toObject(MetricsRequest.decode(body), { longs: String, defaults: false });
  const out: DecodedPoint[] = [];
  for (const rm of request.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? [])
        for (const p of (m.gauge ?? m.sum)?.dataPoints ?? [])
          out.push({ metric: m.name, attributes: JSON.stringify(p.attributes ?? []), value: p.asDouble ?? Number(p.asInt) });
  return out;
}

function logBodies(body: Uint8Array): string[] {
  const request = LogsRequest.toObject(LogsRequest.decode(body), { longs: String, defaults: false });
  const out: string[] = [];
  for (const rl of request.resourceLogs ?? [])
    for (const sl of rl.scopeLogs ?? []) for (const r of sl.logRecords ?? []) out.push(r.body.stringValue);
  return out;
}

describe("OTLP requests under a size limit", () => {
  let largest: ResourceMetrics | undefined;
  let largestPoints = 0;
  const records: ReadableLogRecord[] = [];

  beforeAll(async () => {
    const { blueprint } = loadBlueprint(lab);
    const metrics: MetricsSink = {
      export: async (m) => {
        const points = m.scopeMetrics.reduce((n, s) => n + s.metrics.reduce((k, x) => k + x.dataPoints.length, 0), 0);
        if (points > largestPoints) [largest, largestPoints] = [metricsKept(m), points];
        return true;
      },
      shutdown: async () => {},
    };
    const logs: LogsSink = {
      export: async (r) => {
        records.push(...r);
        return true;
      },
      shutdown: async () => {},
    };
    await emitOffline(blueprint, metrics, { durationMs: 20 * 60_000, intervalMs: 60_000, logs });
  });

  it.each(["protobuf", "json"] as const)("splits a target's scrape into %s requests that decode to the same points", (encoding) => {
    const scrape = largest as ResourceMetrics;
    const whole = encodeMetrics(scrape, "protobuf", 1 << 30);
    expect(whole.requests).toHaveLength(1);
    const limit = Math.floor((encodeMetrics(scrape, encoding, 1 << 30).requests[0]?.bytes ?? 0) / 5);
    const split = encodeMetrics(scrape, encoding, limit, "target");
    expect(split.oversized).toBe(0);
    expect(split.requests.length).toBeGreaterThanOrEqual(5);
    for (const r of split.requests) {
      expect(r.bytes).toBeLessThanOrEqual(limit);
      expect(r.key).toBe("target");
    }
    expect(split.requests.reduce((n, r) => n + r.items, 0)).toBe(largestPoints);
    if (encoding === "protobuf") {
      expect(split.requests.flatMap((r) => metricPoints(r.body))).toEqual(metricPoints(whole.requests[0]?.body as Uint8Array));
    } else {
      const names = split.requests.flatMap((r) =>
        (
          JSON.parse(new TextDecoder().decode(r.body)) as {
            resourceMetrics: Array<{
              scopeMetrics: Array<{ metrics: Array<{ name: string; gauge?: { dataPoints: unknown[] }; sum?: { dataPoints: unknown[] } }> }>;
            }>;
          }
        ).resourceMetrics.flatMap((rm) =>
          rm.scopeMetrics.flatMap((sm) => sm.metrics.flatMap((m) => ((m.gauge ?? m.sum)?.dataPoints ?? []).map(() => m.name))),
        ),
      );
      expect(names).toEqual(metricPoints(whole.requests[0]?.body as Uint8Array).map((p) => p.metric));
    }
  });

  /** The largest scrape with each metric's points `times` over: a larger target of the same shape. */
  const repeated = (times: number): ResourceMetrics => {
    const scrape = largest as ResourceMetrics;
    return {
      resource: scrape.resource,
      scopeMetrics: scrape.scopeMetrics.map((sm) => ({
        scope: sm.scope,
        metrics: sm.metrics.map((m) => ({ ...m, dataPoints: Array.from({ length: times }, () => m.dataPoints).flat() }) as typeof m),
      })),
    };
  };

  it("cuts a target far over the limit by its first points' size, keeping every point in order", () => {
    // Run:ai's exporter at 100,000 GPUs is one target of ~800k points: here, the largest target
    // repeated to over 20,000.
    const big = repeated(Math.ceil(20_000 / largestPoints));
    const whole = encodeMetrics(big, "protobuf", 1 << 30);
    expect(whole.requests[0]?.items).toBeGreaterThan(8 * 1024);
    const limit = Math.floor((whole.requests[0]?.bytes ?? 0) / 7);
    const split = encodeMetrics(big, "protobuf", limit, "target");
    expect(split.oversized).toBe(0);
    for (const r of split.requests) expect(r.bytes).toBeLessThanOrEqual(limit);
    expect(split.requests.reduce((n, r) => n + r.items, 0)).toBe(whole.requests[0]?.items);
    expect(split.requests.flatMap((r) => metricPoints(r.body))).toEqual(metricPoints(whole.requests[0]?.body as Uint8Array));
  });

  it("encodes a target of a few thousand points once, and sizes only one far larger by its first points", () => {
    // What the sink's encoding costs: node-exporter's targets hold 1,800 to 2,100 points in
    // enterprise.yaml (8 series per logical CPU), two thirds of its points; encoding a sample of
    // each to size it first cost a fifth of the sink's encoding (bench/results/emit-speed.md).
    const encoder = new MetricsEncoder();
    const encoded: number[] = [];
    const counting = (part: ResourceMetrics) => {
      encoded.push(pointsOf(part));
      return encoder.encode(part) ?? new Uint8Array();
    };
    const nodeExporterSized = repeated(Math.ceil(2_048 / largestPoints));
    const points = pointsOf(nodeExporterSized);
    expect(points).toBeLessThan(8 * 1024);
    expect(splitMetrics(nodeExporterSized, counting, 4 * 2 ** 20).requests).toHaveLength(1);
    expect(encoded).toEqual([points]);
    // A target of 20,000 points and more is sized by its first 1,024 before it is encoded whole or in parts.
    encoded.length = 0;
    const big = repeated(Math.ceil(20_000 / largestPoints));
    splitMetrics(big, counting, 1 << 30);
    expect(encoded).toEqual([1024, pointsOf(big)]);
  });

  it("batches log records by count and by size, in order", () => {
    expect(records.length).toBeGreaterThan(1000);
    const byCount = encodeLogs(records, "protobuf", 100, 1 << 30);
    expect(byCount.requests.map((r) => r.items)).toEqual(
      Array.from({ length: Math.ceil(records.length / 100) }, (_, i) => Math.min(100, records.length - i * 100)),
    );
    const limit = 64 * 1024;
    const bySize = encodeLogs(records, "protobuf", records.length, limit);
    expect(bySize.requests.length).toBeGreaterThan(1);
    for (const r of bySize.requests) expect(r.bytes).toBeLessThanOrEqual(limit);
    // Within one request OTLP groups records by resource, so compare as multisets.
    expect(bySize.requests.flatMap((r) => logBodies(r.body)).sort()).toEqual(records.map((r) => String(r.body)).sort());
  });

  it("counts a record too large for any request instead of sending it", () => {
    const huge = { ...(records[0] as ReadableLogRecord), body: "x".repeat(100_000) };
    const encoded = encodeLogs([records[0] as ReadableLogRecord, huge, records[1] as ReadableLogRecord], "protobuf", 512, 64 * 1024);
    expect(encoded.oversized).toBe(1);
    expect(encoded.requests.reduce((n, r) => n + r.items, 0)).toBe(2);
  });
});
