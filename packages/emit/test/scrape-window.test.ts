/**
 * A live scrape's OTLP delivery keeps no more queued ahead of the socket than the transport can
 * have in flight (its four requests of the largest size), whatever the queue's bound: encoding
 * outruns any receiver, and a scrape that waited only at the bound filled the queue to it every
 * interval, memory the run held outside its heap for requests that only waited their turn. All of
 * it is still delivered.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { deliveryConfig, emitOffline, type MetricsSink, OtlpMetricsDelivery } from "@gpusynth/emit";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_IN_FLIGHT } from "../src/delivery/config.js";
import { encodeMetrics } from "../src/delivery/requests.js";
import { type Receiver, receivedPoints, startHttpReceiver } from "./otlp-receiver.js";

const lab = fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url));
/** The smallest request size gpusynth accepts: lab's scrape (about 0.85 MB) is several windows of it. */
const MAX_REQUEST_BYTES = 64 * 1024;

describe("a live scrape's OTLP delivery", () => {
  let receiver: Receiver | undefined;
  afterAll(() => receiver?.kill());

  it("waits while what the transport can have in flight is queued, not the queue's whole bound, and delivers everything", async () => {
    receiver = await startHttpReceiver();
    const delivery = new OtlpMetricsDelivery({
      protocol: "http/protobuf",
      url: `${receiver.url}/v1/metrics`,
      // The queue's default bound (64 MiB) holds many of lab's scrapes.
      config: deliveryConfig({ GPUSYNTH_OTLP_MAX_REQUEST_BYTES: String(MAX_REQUEST_BYTES) }, "metrics"),
      // As a live run's: a scrape's exports wait for room within part of its interval.
      scrapeRoomMs: 30_000,
    });
    const window = MAX_IN_FLIGHT * MAX_REQUEST_BYTES;
    let peakPendingBytes = 0;
    /** Exports that left more waiting than the window, or than their own requests where those are larger, with what the scrape had gathered. */
    const overfull: number[] = [];
    const sink: MetricsSink = {
      export: async (metrics) => {
        const exported = await delivery.export(metrics);
        const pending = delivery.stats().pending.bytes;
        // A target larger than the window goes out once nothing else waits.
        const own = encodeMetrics(metrics, "protobuf", MAX_REQUEST_BYTES).requests.reduce((sum, r) => sum + r.bytes, 0);
        if (pending > Math.max(window, own) + MAX_REQUEST_BYTES) overfull.push(pending);
        peakPendingBytes = Math.max(peakPendingBytes, pending);
        return exported;
      },
      forceFlush: () => delivery.forceFlush(),
      shutdown: async () => {},
    };
    const { blueprint } = loadBlueprint(lab);
    await emitOffline(blueprint, sink, { durationMs: 2 * 60_000, intervalMs: 60_000 });
    expect(await delivery.flush(Date.now() + 30_000)).toBe(true);
    await delivery.shutdown();

    const { enqueued, delivered, dropped } = delivery.stats();
    // Each scrape is several windows' worth, so the window is what held it back.
    expect(enqueued.bytes / 2).toBeGreaterThan(3 * window);
    expect(overfull).toEqual([]);
    expect(peakPendingBytes).toBeLessThan(enqueued.bytes / 4);
    expect(dropped.items).toBe(0);
    expect(delivered.items).toBe(enqueued.items);
    expect(receivedPoints(receiver)).toBe(delivered.items);
  });
});
