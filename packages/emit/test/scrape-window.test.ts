/**
 * A live scrape's OTLP delivery keeps no more queued ahead of the socket than the transport can
 * have in flight (its four requests of the largest size), whatever the queue's bound: encoding
 * outruns any receiver, and a scrape that waited only at the bound filled the queue to it every
 * interval, memory the run held outside its heap for requests that only waited their turn. A
 * target far larger than that is encoded a part at a time, each part after the wait for room. All
 * of it is still delivered.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { deliveryConfig, emitOffline, type MetricsSink, metricsKept, OtlpMetricsDelivery } from "@gpusynth/emit";
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_IN_FLIGHT } from "../src/delivery/config.js";
import { encodeMetrics, pointsOf } from "../src/delivery/requests.js";
import { type Receiver, receivedPoints, startHttpReceiver } from "./otlp-receiver.js";

const lab = fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url));
/** The smallest request size gpusynth accepts: lab's scrape (about 0.85 MB) is several windows of it. */
const MAX_REQUEST_BYTES = 64 * 1024;
const WINDOW = MAX_IN_FLIGHT * MAX_REQUEST_BYTES;

describe("a live scrape's OTLP delivery", () => {
  let receiver: Receiver | undefined;
  afterEach(() => receiver?.kill());

  /** A delivery as a live run's (a scrape's exports wait for room within part of its interval), to a receiver of its own. */
  async function liveDelivery(): Promise<OtlpMetricsDelivery> {
    receiver = await startHttpReceiver();
    return new OtlpMetricsDelivery({
      protocol: "http/protobuf",
      url: `${receiver.url}/v1/metrics`,
      // The queue's default bound (64 MiB) holds many of lab's scrapes.
      config: deliveryConfig({ GPUSYNTH_OTLP_MAX_REQUEST_BYTES: String(MAX_REQUEST_BYTES) }, "metrics"),
      scrapeRoomMs: 30_000,
    });
  }

  /** Everything handed over was delivered, none of it dropped, and the receiver has every point. */
  async function expectAllDelivered(delivery: OtlpMetricsDelivery): Promise<void> {
    expect(await delivery.flush(Date.now() + 30_000)).toBe(true);
    await delivery.shutdown();
    const { enqueued, delivered, dropped } = delivery.stats();
    expect(dropped.items).toBe(0);
    expect(delivered.items).toBe(enqueued.items);
    expect(receivedPoints(receiver as Receiver)).toBe(delivered.items);
  }

  it("waits while what the transport can have in flight is queued, not the queue's whole bound, and delivers everything", async () => {
    const delivery = await liveDelivery();
    let peakPendingBytes = 0;
    /** Exports that left more waiting than the window, or than their own requests where those are larger, with what the scrape had gathered. */
    const overfull: number[] = [];
    const sink: MetricsSink = {
      export: async (metrics) => {
        const exported = await delivery.export(metrics);
        const pending = delivery.stats().pending.bytes;
        // A target larger than the window goes out once nothing else waits.
        const own = encodeMetrics(metrics, "protobuf", MAX_REQUEST_BYTES).requests.reduce((sum, r) => sum + r.bytes, 0);
        if (pending > Math.max(WINDOW, own) + MAX_REQUEST_BYTES) overfull.push(pending);
        peakPendingBytes = Math.max(peakPendingBytes, pending);
        return exported;
      },
      forceFlush: () => delivery.forceFlush(),
      shutdown: async () => {},
    };
    const { blueprint } = loadBlueprint(lab);
    await emitOffline(blueprint, sink, { durationMs: 2 * 60_000, intervalMs: 60_000 });
    // Each scrape is several windows' worth, so the window is what held it back.
    const { enqueued } = delivery.stats();
    expect(enqueued.bytes / 2).toBeGreaterThan(3 * WINDOW);
    expect(overfull).toEqual([]);
    expect(peakPendingBytes).toBeLessThan(enqueued.bytes / 4);
    await expectAllDelivered(delivery);
  });

  it("encodes a target far over the window a part at a time, so no more than the window and a part wait", async () => {
    // Lab's largest target with each metric's points repeated past 20,000 (Run:ai's exporter of
    // platform.yaml is a single target of about 40 MB): a target cut by its first points' size.
    let largest: ResourceMetrics | undefined;
    const capture: MetricsSink = {
      export: async (metrics) => {
        if (largest === undefined || pointsOf(metrics) > pointsOf(largest)) largest = metricsKept(metrics);
        return true;
      },
      shutdown: async () => {},
    };
    await emitOffline(loadBlueprint(lab).blueprint, capture, { durationMs: 60_000, intervalMs: 60_000 });
    const target = largest as ResourceMetrics;
    const times = Math.ceil(20_000 / pointsOf(target));
    const big: ResourceMetrics = {
      resource: target.resource,
      scopeMetrics: target.scopeMetrics.map((sm) => ({
        scope: sm.scope,
        metrics: sm.metrics.map((m) => ({ ...m, dataPoints: Array.from({ length: times }, () => m.dataPoints).flat() }) as typeof m),
      })),
    };
    const bytes = encodeMetrics(big, "protobuf", MAX_REQUEST_BYTES).requests.reduce((sum, r) => sum + r.bytes, 0);
    expect(bytes).toBeGreaterThan(4 * WINDOW);

    const delivery = await liveDelivery();
    // What waits, read whenever the export gives the event loop a turn (between its parts).
    let peakPendingBytes = 0;
    const sampler = setInterval(() => {
      peakPendingBytes = Math.max(peakPendingBytes, delivery.stats().pending.bytes);
    }, 1);
    try {
      await delivery.export(big);
      // And as it returns, its last part queued.
      peakPendingBytes = Math.max(peakPendingBytes, delivery.stats().pending.bytes);
      await delivery.forceFlush();
    } finally {
      clearInterval(sampler);
    }
    // A part is a request or two (cut with a tenth's headroom), and a gathered request may wait beside it.
    expect(peakPendingBytes).toBeLessThanOrEqual(WINDOW + 3 * MAX_REQUEST_BYTES);
    expect(peakPendingBytes).toBeGreaterThan(0);
    expect(delivery.stats().enqueued.bytes).toBe(bytes);
    await expectAllDelivered(delivery);
  });
});
