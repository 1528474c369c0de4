/**
 * Staleness as the collector's prometheus receiver reports it: a series the target exposed at its
 * previous scrape and no longer does is sent once more with the NoRecordedValue flag and no
 * value, in protobuf (decoded here with the code generated from the official OTLP .proto files)
 * and in JSON; a family ends once, and is new when it comes back; a target that leaves ends all
 * its series so; a label set rebuilt with the same labels is the same series; a series keeps its
 * point from one scrape to the next.
 */
import { createRequire } from "node:module";
import { type MetricFamily, type Sample, seriesLabels, type TargetSamples } from "@gpusynth/constructs";
import { unixMs } from "@gpusynth/sim";
import type { DataPoint, ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { columnMetricOf } from "../src/column-metric.js";
import { serializeMetricsJson } from "../src/delivery/json-metrics.js";
import { MetricsEncoder } from "../src/delivery/metrics-encoder.js";
import { MetricsPipeline } from "../src/metrics-pipeline.js";

const require = createRequire(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: generated protobuf code has no types we can import
const root: any = require("otlp-proto-root/build/src/generated/root");
const Request = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;

const util: MetricFamily = {
  id: "dcgm-exporter.gpu_util",
  name: "DCGM_FI_DEV_GPU_UTIL",
  type: "gauge",
  help: "GPU utilization (in %).",
  labels: ["gpu", "pod"],
};
const xid: MetricFamily = {
  id: "dcgm-exporter.xid_errors",
  name: "DCGM_FI_DEV_XID_ERRORS",
  type: "gauge",
  help: "Value of the last XID error encountered.",
  labels: ["gpu"],
};
const sample = (family: MetricFamily, labels: Record<string, string>, value: number): Sample => ({
  family,
  labels: seriesLabels(family, labels),
  value,
});
const target = (host: string) => ({ job: "nvidia-dcgm-exporter", host, port: 9400, path: "/metrics" });

/** The receiver's report on a scrape of `samples` samples, none dropped: signals/receiver.md. */
const REPORT = (samples: number): Point[] => [
  { metric: "up", labels: "", value: 1 },
  { metric: "scrape_samples_scraped", labels: "", value: samples },
  { metric: "scrape_samples_post_metric_relabeling", labels: "", value: samples },
];

interface Point {
  metric: string;
  labels: string;
  value?: number;
  flags?: number;
}

/** Every point of a scrape as the OTLP protobuf gpusynth sends says it, and the same in JSON. */
function pointsOf(metrics: ResourceMetrics): { protobuf: Point[]; json: Point[] } {
  const read = (request: { resourceMetrics: Array<{ scopeMetrics?: Array<{ metrics: Array<Record<string, never>> }> }> }): Point[] =>
    (request.resourceMetrics[0]?.scopeMetrics ?? []).flatMap((scope) =>
      scope.metrics.flatMap((metric: Record<string, { dataPoints: Array<Record<string, unknown>> }>) =>
        ((metric.gauge ?? metric.sum)?.dataPoints ?? []).map((p) => ({
          metric: String(metric.name),
          labels: ((p.attributes ?? []) as Array<{ key: string; value: { stringValue: string } }>)
            .map((a) => `${a.key}=${a.value.stringValue}`)
            .join(","),
          ...(p.asDouble === undefined ? {} : { value: Number(p.asDouble) }),
          ...(p.flags === undefined ? {} : { flags: Number(p.flags) }),
        })),
      ),
    );
  const bytes = new MetricsEncoder().encode(metrics) as Uint8Array;
  return {
    protobuf: read(Request.toObject(Request.decode(bytes), { longs: String, defaults: false })),
    json: read(JSON.parse(Buffer.from(serializeMetricsJson(metrics)).toString("utf8"))),
  };
}

/** A pipeline that keeps what each scrape exported, by host. */
function pipeline() {
  const exported: Array<{ host: string; protobuf: Point[]; json: Point[] }> = [];
  const metrics = new MetricsPipeline({
    export: async (m) => {
      exported.push({ host: String(m.resource.attributes["server.address"]), ...pointsOf(m) });
      return true;
    },
    shutdown: async () => {},
  });
  const scrape = async (targets: TargetSamples[], at: number) => {
    exported.length = 0;
    await metrics.scrape(targets, unixMs(1_767_225_600_000 + at));
    return [...exported];
  };
  return { scrape };
}

describe("stale series, as the collector's prometheus receiver sends them", () => {
  it("sends a series that left once more, flagged NoRecordedValue and without a value, in protobuf and JSON", async () => {
    const { scrape } = pipeline();
    const held = sample(util, { gpu: "0", pod: "train-0" }, 97);
    const idle = sample(util, { gpu: "1" }, 0);
    await scrape([{ target: target("node-a"), samples: [held, idle, sample(xid, { gpu: "0" }, 0)] }], 0);
    // The pod left GPU 0: its series is replaced by one without the pod; the XID family is gone whole.
    const [after] = await scrape([{ target: target("node-a"), samples: [sample(util, { gpu: "0" }, 0), idle] }], 15_000);
    const expected: Point[] = [
      { metric: "DCGM_FI_DEV_GPU_UTIL", labels: "gpu=0", value: 0 },
      { metric: "DCGM_FI_DEV_GPU_UTIL", labels: "gpu=1", value: 0 },
      { metric: "DCGM_FI_DEV_GPU_UTIL", labels: "gpu=0,pod=train-0", flags: 1 },
      { metric: "DCGM_FI_DEV_XID_ERRORS", labels: "gpu=0", flags: 1 },
      // The scrape loop's report on the scrape, after its stale markers.
      ...REPORT(2),
    ];
    expect(after?.protobuf).toEqual(expected);
    expect(after?.json).toEqual(expected);
    // Once: the next scrape has no stale point left.
    const [next] = await scrape([{ target: target("node-a"), samples: [sample(util, { gpu: "0" }, 0), idle] }], 30_000);
    expect(next?.protobuf.filter((p) => p.flags !== undefined)).toEqual([]);
  });

  it("ends a family once: back after a scrape without it, it is new, and its series listed apart are one metric", async () => {
    const { scrape } = pipeline();
    const on = (samples: Sample[], at: number) => scrape([{ target: target("node-a"), samples }], at);
    await on([sample(util, { gpu: "0" }, 4), sample(xid, { gpu: "0" }, 0)], 0);
    await on([sample(util, { gpu: "0" }, 5), sample(xid, { gpu: "0" }, 0)], 15_000);
    const [gone] = await on([sample(util, { gpu: "0" }, 6)], 30_000);
    expect(gone?.protobuf.filter((p) => p.flags !== undefined)).toEqual([{ metric: "DCGM_FI_DEV_XID_ERRORS", labels: "gpu=0", flags: 1 }]);
    // Back with another GPU's series: GPU 0's ended a scrape ago and is not ended again.
    const [back] = await on([sample(util, { gpu: "0" }, 7), sample(xid, { gpu: "1" }, 43)], 45_000);
    expect(back?.protobuf).toEqual([
      { metric: "DCGM_FI_DEV_GPU_UTIL", labels: "gpu=0", value: 7 },
      { metric: "DCGM_FI_DEV_XID_ERRORS", labels: "gpu=1", value: 43 },
      ...REPORT(2),
    ]);
    // A family's series apart in the list are written together, in the order they came.
    const [apart] = await on([sample(util, { gpu: "0" }, 8), sample(xid, { gpu: "1" }, 43), sample(util, { gpu: "1" }, 9)], 60_000);
    expect(apart?.protobuf).toEqual([
      { metric: "DCGM_FI_DEV_GPU_UTIL", labels: "gpu=0", value: 8 },
      { metric: "DCGM_FI_DEV_GPU_UTIL", labels: "gpu=1", value: 9 },
      { metric: "DCGM_FI_DEV_XID_ERRORS", labels: "gpu=1", value: 43 },
      ...REPORT(3),
    ]);
    // And GPU 1's utilisation, gone from the next scrape, is ended then.
    const [after] = await on([sample(util, { gpu: "0" }, 8), sample(xid, { gpu: "1" }, 43)], 75_000);
    expect(after?.protobuf.filter((p) => p.flags !== undefined)).toEqual([{ metric: "DCGM_FI_DEV_GPU_UTIL", labels: "gpu=1", flags: 1 }]);
    expect(after?.json).toEqual(after?.protobuf);
  });

  it("takes a label set built anew with the same labels for the same series", async () => {
    const { scrape } = pipeline();
    await scrape([{ target: target("node-a"), samples: [sample(util, { gpu: "0", pod: "train-0" }, 97)] }], 0);
    const [after] = await scrape([{ target: target("node-a"), samples: [sample(util, { gpu: "0", pod: "train-0" }, 98)] }], 15_000);
    expect(after?.protobuf).toEqual([{ metric: "DCGM_FI_DEV_GPU_UTIL", labels: "gpu=0,pod=train-0", value: 98 }, ...REPORT(1)]);
  });

  it("ends every series of a target that left, and starts afresh if it comes back", async () => {
    const { scrape } = pipeline();
    const samples = [sample(util, { gpu: "0" }, 5), sample(xid, { gpu: "0" }, 0)];
    await scrape(
      [
        { target: target("node-a"), samples },
        { target: target("node-b"), samples },
      ],
      0,
    );
    const left = await scrape([{ target: target("node-a"), samples }], 15_000);
    // node-b: every series stale, its `up` too (Prometheus' end-of-run staleness), and no report.
    expect(left.map((e) => [e.host, e.protobuf.map((p) => `${p.metric} ${p.flags ?? p.value}`)])).toEqual([
      [
        "node-a",
        [
          "DCGM_FI_DEV_GPU_UTIL 5",
          "DCGM_FI_DEV_XID_ERRORS 0",
          "up 1",
          "scrape_samples_scraped 2",
          "scrape_samples_post_metric_relabeling 2",
        ],
      ],
      [
        "node-b",
        [
          "DCGM_FI_DEV_GPU_UTIL 1",
          "DCGM_FI_DEV_XID_ERRORS 1",
          "up 1",
          "scrape_samples_scraped 1",
          "scrape_samples_post_metric_relabeling 1",
        ],
      ],
    ]);
    // Gone for good: no second end, and a return is a new target.
    expect((await scrape([{ target: target("node-a"), samples }], 30_000)).map((e) => e.host)).toEqual(["node-a"]);
    const back = await scrape(
      [
        { target: target("node-a"), samples },
        { target: target("node-b"), samples },
      ],
      45_000,
    );
    expect(back.flatMap((e) => e.protobuf).filter((p) => p.flags !== undefined)).toEqual([]);
  });
  it("hands each scrape's series over as columns of their kept label sets and this scrape's values and time, and as DataPoints to a reader that asks", async () => {
    const scrapes: Array<{ attributes: readonly object[]; values: number[]; times: string[]; read: number[] }> = [];
    const metrics = new MetricsPipeline({
      export: async (m) => {
        const metric = m.scopeMetrics[0]?.metrics.find((each) => each.descriptor.name === util.name);
        const columns = metric === undefined ? undefined : columnMetricOf(metric);
        if (metric === undefined || columns === undefined) throw new Error("the scrape's metric is not held as columns");
        const { attributes, values, count, endTime } = columns.columns;
        const read = metric.dataPoints as DataPoint<number>[];
        scrapes.push({
          attributes: attributes.slice(0, count),
          values: values.slice(0, count),
          times: read.map((p) => `${p.endTime[0]}.${p.endTime[1]}`),
          read: read.map((p) => p.value),
        });
        expect(read.map((p) => p.attributes)).toEqual(attributes.slice(0, count));
        expect(`${endTime[0]}.${endTime[1]}`).toBe(scrapes[scrapes.length - 1]?.times[0]);
        return true;
      },
      shutdown: async () => {},
    });
    // As sources do: a series' label set kept while its subject lives.
    const [gpu0, gpu1, gpu2, gpu3] = ["0", "1", "2", "3"].map((gpu) => seriesLabels(util, { gpu }));
    const scrape = (labelSets: Array<Readonly<Record<string, string>> | undefined>, values: number[], at: number) =>
      metrics.scrape(
        [
          {
            target: target("node-a"),
            samples: labelSets.map((labels, i) => ({
              family: util,
              labels: labels as Readonly<Record<string, string>>,
              value: values[i] ?? 0,
            })),
          },
        ],
        unixMs(1_767_225_600_000 + at),
      );
    await scrape([gpu0, gpu1, gpu2], [1, 2, 3], 0);
    // GPU 3's series arrives between 0's and 1's: 1 and 2 are no longer in their places.
    await scrape([gpu0, gpu3, gpu1, gpu2], [4, 5, 6, 7], 15_000);
    await scrape([gpu0, gpu3, gpu1, gpu2], [8.5, 9, 10, 11], 30_000);
    const [first, second, third] = scrapes as [(typeof scrapes)[0], (typeof scrapes)[0], (typeof scrapes)[0]];
    // The kept label sets themselves (what the encoders keep their bytes with), in the scrape's order.
    expect(first.attributes).toEqual([gpu0, gpu1, gpu2]);
    expect(second.attributes.every((labels, i) => labels === [gpu0, gpu3, gpu1, gpu2][i])).toBe(true);
    expect([first.values, second.values, third.values]).toEqual([
      [1, 2, 3],
      [4, 5, 6, 7],
      [8.5, 9, 10, 11],
    ]);
    expect([first.read, second.read, third.read]).toEqual([first.values, second.values, third.values]);
    expect(second.times).toEqual(Array(4).fill("1767225615.0"));
    expect(third.times).toEqual(Array(4).fill("1767225630.0"));
  });
});
