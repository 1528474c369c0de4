/**
 * gpusynth's OTLP metrics encoder against the SDK's ProtobufMetricsSerializer: byte for byte the
 * same request for every target every shipped blueprint and scenario emits, scrape after scrape
 * (the encoder keeps parts from one scrape to the next), in a shard, cut to fit a receiver's
 * 4 MiB (hyperscale is left out: its one frame costs more than the rest together), with label
 * sets that keep their bytes, and for what the SDK's own instruments produce (start times,
 * integers, attributes that are not strings, histograms left to the SDK). Stale points, which the
 * SDK cannot write, are taken out here and checked in staleness.test.ts.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { KEPT_OTLP, seriesLabels } from "@gpusynth/constructs";
import { emitOffline, MetricsEncoder, type MetricsSink, metricsKept } from "@gpusynth/emit";
import { JsonMetricsSerializer, ProtobufMetricsSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { type DataPoint, MeterProvider, type MetricData, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { shippedBlueprints } from "../../cli/src/repo-paths.js";
import { columnMetricOf } from "../src/column-metric.js";
import { serializeMetricsJson } from "../src/delivery/json-metrics.js";
import { type Encoded, splitMetrics } from "../src/delivery/requests.js";

const blueprints = fileURLToPath(new URL("../../../blueprints/", import.meta.url));
const shipped = shippedBlueprints().filter((path) => !path.endsWith("/hyperscale.yaml"));

const sdk = (metrics: ResourceMetrics): Uint8Array => ProtobufMetricsSerializer.serializeRequest(metrics) ?? new Uint8Array();
const sdkJson = (metrics: ResourceMetrics): Uint8Array => JsonMetricsSerializer.serializeRequest(metrics) ?? new Uint8Array();
const points = (metrics: ResourceMetrics): number =>
  metrics.scopeMetrics.reduce((n, s) => n + s.metrics.reduce((k, m) => k + m.dataPoints.length, 0), 0);

/**
 * A scrape without its stale points (staleness.ts): the SDK has no way to write them (its
 * DataPoint has no flags), so they are compared in staleness.test.ts, decoded.
 */
function withoutStalePoints(metrics: ResourceMetrics): ResourceMetrics {
  let stale = 0;
  const scopeMetrics = metrics.scopeMetrics.map((scope) => ({
    ...scope,
    metrics: scope.metrics.flatMap((metric) => {
      const all = metric.dataPoints as DataPoint<number>[];
      const dataPoints = all.filter((p) => !Number.isNaN(p.value));
      stale += all.length - dataPoints.length;
      // A metric with none is left as the scrape made it (its points a scrape's columns).
      if (dataPoints.length === all.length) return [metric];
      return dataPoints.length === 0 ? [] : [{ ...metric, dataPoints } as MetricData];
    }),
  }));
  return stale === 0 ? metrics : { ...metrics, scopeMetrics };
}

/** The request limit a target is cut at: the receiver's 4 MiB, or a quarter of its size where it fits (so it is cut). */
const limitFor = (bytes: number): number => Math.min(4 * 2 ** 20, Math.floor(bytes / 4));

/** A sink that encodes every target both ways (and as JSON, when `json`) and keeps the targets whose bytes differ. */
function comparingSink(encoder: MetricsEncoder, json = false) {
  const seen = {
    scrapes: 0,
    targets: 0,
    points: 0,
    counters: 0,
    stale: 0,
    differing: [] as string[],
    largest: undefined as ResourceMetrics | undefined,
    /** The SDK's bytes for the largest target. */
    largestBytes: 0,
    /** The largest target cut by gpusynth's encoder as the run handed it over (its metrics' points still columns), and whether any were. */
    largestCut: undefined as Encoded | undefined,
    largestAsColumns: false,
  };
  const sink: MetricsSink = {
    export: async (scraped) => {
      const metrics = withoutStalePoints(scraped);
      seen.targets++;
      seen.points += points(metrics);
      seen.counters += metrics.scopeMetrics.flatMap((s) => s.metrics).filter((m) => "isMonotonic" in m).length;
      const ours = encoder.encode(metrics);
      const theirs = sdk(metrics);
      if (points(metrics) > (seen.largest === undefined ? 0 : points(seen.largest))) {
        seen.largest = metricsKept(metrics);
        seen.largestBytes = theirs.byteLength;
        // Cut now, while its points are the scrape's columns (ranges of them, not copies of DataPoints).
        const cutEncoder = new MetricsEncoder();
        seen.largestCut = splitMetrics(
          metrics,
          (part) => cutEncoder.encode(part) ?? new Uint8Array(),
          limitFor(theirs.byteLength),
          "target",
        );
        seen.largestAsColumns = metrics.scopeMetrics.some((scope) => scope.metrics.some((metric) => columnMetricOf(metric) !== undefined));
      }
      if (ours === undefined || Buffer.compare(ours, theirs) !== 0)
        seen.differing.push(String(metrics.resource.attributes["service.name"]));
      // And in the OTLP JSON encoding (--otlp-json, http/json), where asked.
      if (json && Buffer.compare(serializeMetricsJson(metrics), sdkJson(metrics)) !== 0)
        seen.differing.push(`${String(metrics.resource.attributes["service.name"])} (JSON)`);
      return true;
    },
    forceFlush: async () => {
      seen.scrapes++;
    },
    shutdown: async () => {},
  };
  return { sink, seen };
}

describe("the OTLP metrics encoder", () => {
  it.each(shipped.map((path) => [path.slice(blueprints.length), path]))(
    "writes the SDK serializers' bytes (protobuf, and JSON but for platform) for every target of %s, scrape after scrape, and cuts its largest the same way",
    async (_name, path) => {
      const { blueprint } = loadBlueprint(path);
      // The JSON encoding too, but for platform (the SDK's JSON serializer alone would take seconds there).
      const { sink, seen } = comparingSink(new MetricsEncoder(), !path.endsWith("platform.yaml"));
      // Two scrapes (an offline run's first comes one interval in): the second writes what the
      // first kept of each label set. Platform's and enterprise's one scrape each: what is kept is
      // kept alike in every blueprint, and lab and the scenarios (a third of enterprise's series
      // together) write it a second time.
      const scrapes = path.endsWith("platform.yaml") || path.endsWith("enterprise.yaml") ? 1 : 2;
      await emitOffline(blueprint, sink, { durationMs: scrapes * 900_000, intervalMs: 900_000 });
      expect(seen.scrapes).toBe(scrapes);
      expect(seen.differing).toEqual([]);
      expect(seen.points).toBeGreaterThan(1_000);
      expect(seen.counters).toBeGreaterThan(0);
      // The largest target (platform's: Run:ai's exporter), cut at the receiver's 4 MiB or, where
      // it fits, at a quarter of its size: the same requests, point for point and byte for byte.
      // The largest as cut while the run handed it over, its points ranges of the scrape's columns,
      // against the SDK's serializer on a copy of its DataPoints, cut the same way.
      const limit = limitFor(seen.largestBytes);
      const ours = seen.largestCut as Encoded;
      const theirs = splitMetrics(seen.largest as ResourceMetrics, sdk, limit, "target");
      expect(seen.largestAsColumns).toBe(true);
      expect(ours.requests.length).toBeGreaterThan(1);
      expect(ours.requests.map((r) => r.items)).toEqual(theirs.requests.map((r) => r.items));
      expect(ours.requests.every((r, i) => Buffer.compare(r.body, theirs.requests[i]?.body ?? new Uint8Array()) === 0)).toBe(true);
      expect(Math.max(...ours.requests.map((r) => r.bytes))).toBeLessThanOrEqual(limit);
    },
  );

  it("writes the same bytes for a shard's targets", async () => {
    // Lab's two shards (what the encoder meets in a shard is the same in any blueprint): the
    // cluster-wide targets with half the nodes', and the other half alone.
    const { blueprint } = loadBlueprint(`${blueprints}lab.yaml`);
    for (const index of [0, 1]) {
      const { sink, seen } = comparingSink(new MetricsEncoder());
      await emitOffline(blueprint, sink, { durationMs: 3_600_000, intervalMs: 1_800_000, shard: { index, count: 2 } });
      expect(seen.differing).toEqual([]);
      expect(seen.targets).toBeGreaterThan(0);
    }
  });

  it("keeps a series' label set's bytes with it, and never lends them to a copy", async () => {
    const family = {
      id: "dcgm-exporter.gpu_util",
      name: "DCGM_FI_DEV_GPU_UTIL",
      type: "gauge",
      help: "GPU utilization (in %).",
      labels: ["gpu", "UUID", "cpu"],
    } as const;
    const gpu = seriesLabels(family, { gpu: "0", UUID: "GPU-1" });
    const scrape = (labels: Readonly<Record<string, string>>[], value: number): ResourceMetrics => {
      const point = (attributes: Readonly<Record<string, string>>) => ({
        attributes,
        startTime: [0, 0],
        endTime: [1_767_225_600, value],
        value,
      });
      const metric = {
        descriptor: { name: family.name, description: family.help, unit: "", valueType: 1 },
        aggregationTemporality: 1,
        dataPointType: 2,
        dataPoints: labels.map(point),
      };
      return {
        resource: resourceFromAttributes({ "service.name": "dcgm" }),
        scopeMetrics: [{ scope: { name: "receiver" }, metrics: [metric] }],
      } as unknown as ResourceMetrics;
    };
    const encoder = new MetricsEncoder();
    const same = (metrics: ResourceMetrics) => Buffer.compare(encoder.encode(metrics) ?? new Uint8Array(), sdk(metrics)) === 0;
    expect(same(scrape([gpu], 1))).toBe(true);
    // Made after the label set was encoded: a copy with one more label must not carry its bytes.
    const copy = { ...gpu, cpu: "total" };
    expect(same(scrape([gpu, copy], 2))).toBe(true);
    expect(same(scrape([copy, gpu, gpu], 3))).toBe(true);
    expect(Object.keys(gpu)).toEqual(["gpu", "UUID"]);
    expect(JSON.stringify(copy)).toBe('{"gpu":"0","UUID":"GPU-1","cpu":"total"}');
  });

  it("keeps the bytes of a series whose target adds labels (the kubelet's metrics_path), and of its scrape report, from one scrape to the next", async () => {
    const { blueprint } = loadBlueprint(`${blueprints}lab.yaml`);
    const encoder = new MetricsEncoder();
    // The kubelet's series' attributes at the scrape before, and those met again without their bytes.
    let before = new Set<object>();
    let now = new Set<object>();
    let metAgain = 0;
    const unkept: string[] = [];
    const sink: MetricsSink = {
      export: async (metrics) => {
        if (metrics.resource.attributes["service.name"] === "kubelet")
          for (const metric of metrics.scopeMetrics.flatMap((s) => s.metrics))
            for (const point of metric.dataPoints) {
              now.add(point.attributes);
              if (!before.has(point.attributes)) continue;
              metAgain++;
              if ((point.attributes as { [KEPT_OTLP]?: string })[KEPT_OTLP] === undefined) unkept.push(metric.descriptor.name);
            }
        expect(Buffer.compare(encoder.encode(metrics) ?? new Uint8Array(), sdk(metrics))).toBe(0);
        return true;
      },
      forceFlush: async () => {
        before = now;
        now = new Set();
      },
      shutdown: async () => {},
    };
    await emitOffline(blueprint, sink, { durationMs: 3 * 60_000, intervalMs: 60_000 });
    expect(metAgain).toBeGreaterThan(1_000);
    // The receiver's report on each scrape (up, scrape_samples_*) with the target's labels included.
    expect(unkept).toEqual([]);
  });

  it("writes the same bytes for what the SDK's instruments record: start times, integers, any attribute", async () => {
    class Reader extends MetricReader {
      protected override async onForceFlush(): Promise<void> {}
      protected override async onShutdown(): Promise<void> {}
    }
    const reader = new Reader();
    const provider = new MeterProvider({
      resource: resourceFromAttributes({ "service.name": "trainer", "host.cpus": 224, "k8s.pod.ready": true, ratio: 0.5, big: 2 ** 40 }),
      readers: [reader],
    });
    const meter = provider.getMeter("gpusynth.test", "1.0", { schemaUrl: "https://opentelemetry.io/schemas/1.26.0" });
    meter.createCounter("steps", { unit: "{step}", valueType: 0 }).add(3, { rank: 0, ok: true, "name–ü": "ä" });
    meter.createUpDownCounter("queue", { description: "depth" }).add(-7.5, { negative: -12, far: -(2 ** 40) });
    meter.createGauge("temp").record(71.25, {});
    const plain = (await reader.collect()).resourceMetrics;
    expect(Buffer.compare(new MetricsEncoder().encode(plain) ?? new Uint8Array(), sdk(plain))).toBe(0);
    // A histogram is the SDK serializer's to write.
    meter.createHistogram("latency").record(0.2);
    const withHistogram = (await reader.collect()).resourceMetrics;
    expect(new MetricsEncoder().encode(withHistogram)).toBeUndefined();
    await provider.shutdown();
  });
});
