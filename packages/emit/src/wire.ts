/**
 * How a sink stores one target's scrape, as data: a sink names its wire format, anything (the
 * run's own thread, or a worker thread emitting a shard) encodes scrapes in it, and the sink
 * takes what was encoded. This is what lets K worker threads share the encoding — most of a
 * run's cost — while one OTLP pipeline (one queue, one connection, one delivery report) or one
 * file receives it all.
 */
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { metricsJson } from "./delivery/json-metrics.js";
import {
  type Encoded,
  type Encoding,
  encodeMetrics,
  encodeMetricsParts,
  pointParts,
  pointsOf,
  type RequestMemory,
} from "./delivery/requests.js";

export type WireFormat =
  /** OTLP export requests of at most `maxRequestBytes`, keyed by target (delivery/requests.ts). */
  | { readonly kind: "otlp"; readonly encoding: Encoding; readonly maxRequestBytes: number }
  /**
   * OTLP-JSON ExportMetricsServiceRequest lines, newline included (the collector's file exporter):
   * one per scrape, or several for a scrape of more than `pointsPerLine` points (POINTS_PER_LINE).
   */
  | { readonly kind: "otlp-json-line"; readonly pointsPerLine: number };

/** One target's scrape in a sink's wire format; plain data, so it crosses threads by structured clone. */
export type EncodedScrape =
  | { readonly kind: "otlp"; readonly encoded: Encoded; readonly points: number }
  | { readonly kind: "otlp-json-line"; readonly lines: readonly string[]; readonly points: number };

/**
 * Points in one line of OTLP JSON at most: a line is one JavaScript string, and V8's strings hold
 * at most 2^29 - 24 characters (about 512 MiB). A point takes about 0.5 KiB (463 bytes in 40
 * minutes of crash-loop.yaml), under 1 KiB with a pod's labels, so a line stays under 256 MiB;
 * platform.yaml's largest target (kube-state-metrics, 170,010 points) is still one line, and
 * hyperscale.yaml's kube-state-metrics, 3.8 million points in one target, ended its shard's run with
 * "RangeError: Invalid string length" before lines were cut.
 */
export const POINTS_PER_LINE = 262_144;

/**
 * Encodes one target's scrape (its ResourceMetrics) in `format`; `memory` keeps each OTLP request's
 * bytes (by default in an array of their own, which a worker thread can transfer).
 */
export function encodeScrape(format: WireFormat, metrics: ResourceMetrics, memory?: RequestMemory): EncodedScrape {
  const points = pointsOf(metrics);
  if (format.kind === "otlp") {
    const encoded = encodeMetrics(metrics, format.encoding, format.maxRequestBytes, targetKeyOf(metrics), memory);
    return { kind: "otlp", encoded, points };
  }
  return { kind: "otlp-json-line", lines: pointParts(metrics, format.pointsPerLine).map((part) => `${metricsJson(part)}\n`), points };
}

/**
 * A target's OTLP requests part by part (requests.ts, encodeMetricsParts), each encoded once the
 * part before has been taken: for a sink that waits between parts to bound what it holds.
 */
export function encodeOtlpParts(
  format: Extract<WireFormat, { kind: "otlp" }>,
  metrics: ResourceMetrics,
  memory?: RequestMemory,
): Generator<Encoded> {
  return encodeMetricsParts(metrics, format.encoding, format.maxRequestBytes, targetKeyOf(metrics), memory);
}

/** One key per scrape target: its requests are delivered in order. */
function targetKeyOf(metrics: ResourceMetrics): string {
  const attributes = metrics.resource.attributes;
  return `${String(attributes["service.name"])}/${String(attributes["service.instance.id"])}`;
}
