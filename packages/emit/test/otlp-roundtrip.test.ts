/**
 * OTLP round trip: what gpusynth sends over gRPC through the OpenTelemetry SDK's transport,
 * received and decoded by an in-process OTLP receiver, is shaped like the collector's prometheus
 * receiver output and carries the simulation's values.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { BLUEPRINT_CALENDAR, ClusterRun, driveAsync, type TargetSamples } from "@gpusynth/constructs";
import {
  type DeliveryEvents,
  deliveryConfig,
  MetricsPipeline,
  OtlpMetricsDelivery,
  RECEIVER_SCOPE_NAME,
  RECEIVER_SCOPE_VERSION,
} from "@gpusynth/emit";
import { simulatedMs } from "@gpusynth/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attributeMap, type ExportRequest, type OtlpMetric, type Receiver, startReceiver } from "./otlp-receiver.js";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url));
const MINUTE = 60_000;

/** The live run's OTLP/gRPC delivery, with the defaults a user gets, to `url`. */
function delivery(url: string, events: DeliveryEvents = {}): OtlpMetricsDelivery {
  return new OtlpMetricsDelivery({
    protocol: "grpc",
    url,
    config: deliveryConfig({}, "metrics"),
    events,
    retry: { initialMs: 10, maxMs: 50 },
  });
}

describe("OTLP/gRPC round trip", () => {
  let receiver: Receiver;
  const { blueprint } = loadBlueprint(scenario);
  const run = new ClusterRun(blueprint);
  const scrapes: Array<{ time: number; requests: ExportRequest[] }> = [];
  const errors: unknown[] = [];
  let lastTargets: readonly TargetSamples[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    const sink = delivery(receiver.url, { onOutageStart: (e) => errors.push(e), onRejected: (e) => errors.push(e) });
    const pipeline = new MetricsPipeline(sink);
    // Scrape at 00:29, 00:31 (after the reclaim wave) and 00:32.
    const schedule = [29 * MINUTE, 31 * MINUTE, 32 * MINUTE].map(simulatedMs);
    await driveAsync(run, schedule, [
      {
        consume: async (frame) => {
          const time = blueprint.time.start + frame.simulatedMs;
          const before = receiver.requests.length;
          await pipeline.scrape(frame.targets, BLUEPRINT_CALENDAR(time));
          await sink.flush(Date.now() + 10_000);
          scrapes.push({ time, requests: receiver.requests.slice(before) });
          lastTargets = frame.targets;
        },
      },
    ]);
    await pipeline.shutdown();
  });
  afterAll(async () => receiver.close());

  const last = () => scrapes[scrapes.length - 1]?.requests ?? [];
  const resources = () => last().flatMap((r) => r.resourceMetrics);
  const allMetrics = (): OtlpMetric[] => resources().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));

  it("delivers every scrape without error", () => {
    expect(errors).toEqual([]);
    expect(scrapes.every((s) => s.requests.length > 0)).toBe(true);
  });

  it("sends one resource per emulated target, with the receiver's resource attributes", () => {
    const targets = lastTargets.map((t) => t.target);
    // Targets are delivered concurrently, so in any order.
    const byInstance = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      `${a["service.name"]}/${a["service.instance.id"]}`.localeCompare(`${b["service.name"]}/${b["service.instance.id"]}`);
    expect(
      resources()
        .map((r) => attributeMap(r.resource.attributes))
        .sort(byInstance),
    ).toEqual(
      targets
        .map(
          (t): Record<string, unknown> => ({
            "service.name": t.job,
            "service.instance.id": `${t.host}:${t.port}`,
            "server.address": t.host,
            "server.port": String(t.port),
            "url.scheme": "http",
            // Where discovery gives Kubernetes' meta labels (the exporters' pods, the kubelet's
            // node), the receiver maps them to the resource attributes of the pod or node.
            ...(t.kubernetes === undefined
              ? {}
              : {
                  ...("pod" in t.kubernetes.address
                    ? { "k8s.pod.name": t.kubernetes.address.pod, "k8s.container.name": t.kubernetes.address.container }
                    : {}),
                  "k8s.namespace.name": t.kubernetes.namespace,
                  "k8s.node.name": t.node,
                }),
          }),
        )
        .sort(byInstance),
    );
  });

  it("uses the prometheus receiver's scope, vendor names verbatim, no unit", () => {
    for (const r of resources()) {
      expect(r.scopeMetrics.map((s) => s.scope)).toEqual([{ name: RECEIVER_SCOPE_NAME, version: RECEIVER_SCOPE_VERSION }]);
    }
    const names = new Set(allMetrics().map((m) => m.name));
    for (const name of [
      "DCGM_FI_DEV_GPU_UTIL",
      "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
      "kube_pod_info",
      "runai_allocated_gpu_count_per_gpu",
      "kai_pod_group_evicted_pods_total",
    ]) {
      expect(names).toContain(name);
    }
    expect(
      allMetrics()
        .filter((m) => (m.unit ?? "") !== "")
        .map((m) => m.name),
    ).toEqual([]);
  });

  it("sends counters as monotonic cumulative sums and gauges as gauges, all values doubles", () => {
    const families = new Map(run.metrics.families().map((f) => [f.name, f]));
    // What is off, by metric: one assertion for the scrape's tens of thousands of points.
    const off: string[] = [];
    for (const m of allMetrics()) {
      const family = families.get(m.name);
      if (family?.type === "counter") {
        if (m.sum?.aggregationTemporality !== "AGGREGATION_TEMPORALITY_CUMULATIVE" || m.sum.isMonotonic !== true)
          off.push(`${m.name}: not a monotonic cumulative sum`);
      } else if (m.gauge === undefined) off.push(`${m.name}: not a gauge`);
      else if (m.gauge.dataPoints.some((p) => (p.startTimeUnixNano ?? "0") !== "0")) off.push(`${m.name}: a gauge with a start time`);
      for (const p of [...(m.gauge?.dataPoints ?? []), ...(m.sum?.dataPoints ?? [])])
        if (typeof p.asDouble !== "number" || p.asInt !== undefined) off.push(`${m.name}: a value that is not a double`);
    }
    expect([...new Set(off)]).toEqual([]);
  });

  it("keeps job and instance off data points and drops empty label values", () => {
    const off = new Set<string>();
    for (const m of allMetrics()) {
      for (const p of [...(m.gauge?.dataPoints ?? []), ...(m.sum?.dataPoints ?? [])]) {
        const attributes = attributeMap(p.attributes);
        for (const key of ["job", "instance"]) if (key in attributes) off.add(`${m.name}: ${key} on a point`);
        for (const [key, value] of Object.entries(attributes)) if (value === "") off.add(`${m.name}: ${key} empty`);
      }
    }
    expect([...off]).toEqual([]);
  });

  it("stamps points with the scrape time and no start time, as the receiver does without OpenMetrics' _created", () => {
    const nanos = (ms: number) => String(BigInt(ms) * 1_000_000n);
    for (const { time, requests } of scrapes) {
      const points = requests
        .flatMap((r) => r.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((s) => s.metrics)))
        .flatMap((m) => [...(m.sum?.dataPoints ?? []), ...(m.gauge?.dataPoints ?? [])]);
      expect(points.length).toBeGreaterThan(0);
      const stamps = new Set(points.map((p) => `${p.timeUnixNano}/${p.startTimeUnixNano ?? "0"}`));
      expect([...stamps]).toEqual([`${nanos(time)}/0`]);
    }
  });

  it("carries the simulation's values: pod labels on held GPUs, queue allocations", () => {
    const view = run.simulation.view();
    const util = allMetrics()
      .filter((m) => m.name === "DCGM_FI_DEV_GPU_UTIL")
      .flatMap((m) => m.gauge?.dataPoints ?? []);
    const gpus = new Map(view.pools.flatMap((pool) => pool.nodes.flatMap((n) => n.gpus)).map((g) => [g.uuid, g]));
    const mislabelled = util
      .map((p) => attributeMap(p.attributes))
      .filter((a) => a.pod !== gpus.get(String(a.UUID))?.holder?.name)
      .map((a) => `${a.UUID} labelled ${a.pod}`);
    expect(util.length).toBeGreaterThan(0);
    expect(mislabelled).toEqual([]);
    const allocated = allMetrics()
      .filter((m) => m.name === "kai_queue_allocated_gpus")
      .flatMap((m) => m.gauge?.dataPoints ?? []);
    for (const q of view.queues) {
      const point = allocated.find((p) => attributeMap(p.attributes).queue_name === `${q.name}-${q.pool}`);
      expect(point?.asDouble).toBe(q.allocated);
    }
    const evicted = allMetrics().find((m) => m.name === "kai_pod_group_evicted_pods_total");
    expect(evicted?.sum?.dataPoints.map((p) => attributeMap(p.attributes).action)).toContain("reclaim");
  });
});

describe("a collector that is down", () => {
  it("costs one outage report and a later delivery, never the run or the data", async () => {
    const receiver = await startReceiver();
    const { blueprint } = loadBlueprint(scenario);
    const run = new ClusterRun(blueprint);
    const outages: unknown[] = [];
    const recoveries: unknown[] = [];
    // UNAVAILABLE is retryable: the first scrape's requests wait in the queue and go again.
    receiver.failNext(30);
    const sink = delivery(receiver.url, { onOutageStart: (e) => outages.push(e), onOutageEnd: (r) => recoveries.push(r) });
    const pipeline = new MetricsPipeline(sink);
    /** The run's scrape at `t`, taken between the test's own steps. */
    const scrapeAt = (t: number) => {
      run.advanceTo(simulatedMs(t));
      return pipeline.scrape(run.frame().targets, BLUEPRINT_CALENDAR(blueprint.time.start + t));
    };
    const down = await scrapeAt(MINUTE);
    // The scrape itself does not wait for the network: it is done while its requests still fail.
    expect(sink.stats().delivered.items).toBe(0);
    expect(down.points).toBeGreaterThan(0);
    const up = await scrapeAt(2 * MINUTE);
    expect(await sink.flush(Date.now() + 20_000)).toBe(true);
    await pipeline.shutdown();
    await receiver.close();
    expect(outages).toHaveLength(1);
    expect(recoveries).toHaveLength(1);
    expect(sink.stats().delivered.items).toBe(down.points + up.points);
    // Every target of both scrapes once, the small ones gathered into requests of several.
    expect(receiver.requests.flatMap((r) => r.resourceMetrics)).toHaveLength(down.targets + up.targets);
    expect(receiver.requests.length).toBeLessThan(down.targets + up.targets);
  }, 60_000);
});
