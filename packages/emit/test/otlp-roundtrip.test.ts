/**
 * OTLP round trip: what gpusynth sends over gRPC through the OpenTelemetry SDK exporter,
 * received and decoded by an in-process OTLP receiver, is shaped like the collector's prometheus
 * receiver output and carries the simulation's values.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterMetrics } from "@gpusynth/constructs";
import { createOtlpExporter, ExporterSink, MetricsPipeline, RECEIVER_SCOPE_NAME, RECEIVER_SCOPE_VERSION } from "@gpusynth/emit";
import { Simulation } from "@gpusynth/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attributeMap, type ExportRequest, type OtlpMetric, type Receiver, startReceiver } from "./otlp-receiver.js";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url));
const MINUTE = 60_000;

describe("OTLP/gRPC round trip", () => {
  let receiver: Receiver;
  const { blueprint } = loadBlueprint(scenario);
  const simulation = new Simulation(blueprint);
  const metrics = new ClusterMetrics(blueprint);
  simulation.onEvent(metrics.record);
  const scrapes: Array<{ time: number; requests: ExportRequest[] }> = [];
  const errors: unknown[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    const pipeline = new MetricsPipeline(new ExporterSink(createOtlpExporter("grpc", receiver.url), (e) => errors.push(e)));
    // Scrape at 00:29, 00:31 (after the reclaim wave) and 00:32.
    for (const t of [29 * MINUTE, 31 * MINUTE, 32 * MINUTE]) {
      simulation.runUntil(t);
      const before = receiver.requests.length;
      await pipeline.scrape(metrics.collect(simulation.view()), blueprint.time.start + t);
      scrapes.push({ time: blueprint.time.start + t, requests: receiver.requests.slice(before) });
    }
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
    const targets = metrics.collect(simulation.view()).map((t) => t.target);
    expect(resources().map((r) => attributeMap(r.resource.attributes))).toEqual(
      targets.map((t) => ({
        "service.name": t.job,
        "service.instance.id": `${t.host}:${t.port}`,
        "server.address": t.host,
        "server.port": String(t.port),
        "url.scheme": "http",
      })),
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
    for (const m of allMetrics()) expect(m.unit ?? "").toBe("");
  });

  it("sends counters as monotonic cumulative sums and gauges as gauges, all values doubles", () => {
    const families = new Map(metrics.families().map((f) => [f.name, f]));
    for (const m of allMetrics()) {
      const family = families.get(m.name);
      if (family?.type === "counter") {
        expect(m.sum, m.name).toMatchObject({ aggregationTemporality: "AGGREGATION_TEMPORALITY_CUMULATIVE", isMonotonic: true });
      } else {
        expect(m.gauge, m.name).toBeDefined();
        for (const p of m.gauge?.dataPoints ?? []) expect(p.startTimeUnixNano ?? "0", "gauges carry no start time").toBe("0");
      }
      for (const p of [...(m.gauge?.dataPoints ?? []), ...(m.sum?.dataPoints ?? [])]) {
        expect(p.asDouble, m.name).toBeTypeOf("number");
        expect(p.asInt).toBeUndefined();
      }
    }
  });

  it("keeps job and instance off data points and drops empty label values", () => {
    for (const m of allMetrics()) {
      for (const p of [...(m.gauge?.dataPoints ?? []), ...(m.sum?.dataPoints ?? [])]) {
        const attributes = attributeMap(p.attributes);
        expect(attributes).not.toHaveProperty("job");
        expect(attributes).not.toHaveProperty("instance");
        for (const value of Object.values(attributes)) expect(value).not.toBe("");
      }
    }
  });

  it("stamps points with the scrape time and counters with the first scrape as start", () => {
    const series = (requests: ExportRequest[]) =>
      requests
        .flatMap((r) => r.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((s) => s.metrics)))
        .filter((m) => m.name === "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")
        .flatMap((m) => m.sum?.dataPoints ?? []);
    const nanos = (ms: number) => String(BigInt(ms) * 1_000_000n);
    const [first, , third] = scrapes as [(typeof scrapes)[0], (typeof scrapes)[0], (typeof scrapes)[0]];
    const a = series(first.requests);
    const c = series(third.requests);
    expect(a.length).toBe(16);
    for (const p of a) expect([p.timeUnixNano, p.startTimeUnixNano]).toEqual([nanos(first.time), nanos(first.time)]);
    // Energy only grows, so a series seen since the first scrape keeps that start.
    const byUuid = (points: typeof a) => new Map(points.map((p) => [attributeMap(p.attributes).UUID, p]));
    const firstByGpu = byUuid(a);
    for (const [uuid, p] of byUuid(c)) {
      if (!firstByGpu.has(uuid)) continue;
      expect(p.timeUnixNano).toBe(nanos(third.time));
      if (JSON.stringify(attributeMap(p.attributes)) === JSON.stringify(attributeMap(firstByGpu.get(uuid)?.attributes))) {
        expect(p.startTimeUnixNano).toBe(nanos(first.time));
      }
    }
  });

  it("carries the simulation's values: pod labels on held GPUs, queue allocations", () => {
    const view = simulation.view();
    const util = allMetrics()
      .filter((m) => m.name === "DCGM_FI_DEV_GPU_UTIL")
      .flatMap((m) => m.gauge?.dataPoints ?? []);
    for (const p of util) {
      const a = attributeMap(p.attributes);
      const gpu = view.pools.flatMap((pool) => pool.nodes.flatMap((n) => n.gpus)).find((g) => g.uuid === a.UUID);
      expect(a.pod).toBe(gpu?.holder?.name);
    }
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
  it("costs a failed delivery and a report, never the run", async () => {
    const receiver = await startReceiver();
    const { blueprint } = loadBlueprint(scenario);
    const simulation = new Simulation(blueprint);
    const metrics = new ClusterMetrics(blueprint);
    const failures: unknown[] = [];
    // UNAVAILABLE is retryable: the SDK exporter retries with backoff before giving up.
    receiver.failNext(1_000);
    const pipeline = new MetricsPipeline(new ExporterSink(createOtlpExporter("grpc", receiver.url), (e) => failures.push(e)));
    simulation.runUntil(MINUTE);
    const down = await pipeline.scrape(metrics.collect(simulation.view()), blueprint.time.start + MINUTE);
    receiver.failNext(0);
    simulation.runUntil(2 * MINUTE);
    const up = await pipeline.scrape(metrics.collect(simulation.view()), blueprint.time.start + 2 * MINUTE);
    await pipeline.shutdown();
    await receiver.close();
    expect(down.failedTargets).toBe(down.targets);
    expect(failures.length).toBe(down.targets);
    expect(up.failedTargets).toBe(0);
    expect(receiver.requests.length).toBe(up.targets);
  }, 120_000);
});
