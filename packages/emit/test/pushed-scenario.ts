/**
 * A shipped scenario on simulated time, for the journeys on a real store: an offline run (as
 * fast as the receiver takes it) pushes every scrape's OTLP (the SDK's HTTP
 * transport, protobuf; stale series flagged as the collector's prometheus receiver flags them) to
 * a receiver, stamped on the blueprint's calendar, and a Prometheus is asked about the simulated
 * instants the checks are about — no wall clock, no slack for a busy machine.
 *
 * Ground truth comes from a second, in-process run of the same blueprint (runs are deterministic).
 */
import { fileURLToPath } from "node:url";
import { type Blueprint, loadBlueprint } from "@gpusynth/blueprint";
import { BLUEPRINT_CALENDAR } from "@gpusynth/constructs";
import { type DomainEvent, Simulation } from "@gpusynth/sim";
import { expect } from "vitest";
import { deliveryConfig } from "../src/delivery/config.js";
import { OtlpMetricsDelivery } from "../src/delivery/otlp-delivery.js";
import { emitOffline } from "../src/offline.js";
import { documentedQuery } from "./journey-answers.js";
import type { InstantSample, PrometheusServer, RangeSeries } from "./prometheus-server.js";

/**
 * Simulated time between two scrapes, by default: a minute, as often as the live journeys at ×120
 * were scraped (every 500 ms). The shipped 15 s costs four times the CPU and finds the same; a
 * scenario whose checks read only what lasts may be scraped less often.
 */
export const INTERVAL_MS = 60_000;

export class PushedScenario {
  readonly blueprint: Blueprint;
  readonly events: DomainEvent[] = [];
  private store: PrometheusServer | undefined;

  /** `telemetry`: settings of the blueprint's telemetry to change (how its exporters are scraped, say). */
  constructor(
    file: string,
    readonly durationMs: number,
    readonly intervalMs = INTERVAL_MS,
    telemetry: Partial<Blueprint["telemetry"]> = {},
  ) {
    const loaded = loadBlueprint(fileURLToPath(new URL(`../../../${file}`, import.meta.url))).blueprint;
    this.blueprint = { ...loaded, telemetry: { ...loaded.telemetry, ...telemetry } };
    const truth = new Simulation(this.blueprint);
    truth.onEvent((event) => this.events.push(event));
    truth.runUntil(durationMs);
  }

  /** The Unix ms that the simulated instant `simulatedMs` is stamped with. */
  stamp(simulatedMs: number): number {
    return BLUEPRINT_CALENDAR(this.blueprint.time.start + simulatedMs);
  }

  /** The simulated instant of the first scrape at or after `simulatedMs`. */
  scrapeAfter(simulatedMs: number): number {
    return Math.ceil(simulatedMs / this.intervalMs) * this.intervalMs;
  }

  /** The simulated instant of the run's last scrape. */
  get lastScrape(): number {
    return Math.floor(this.durationMs / this.intervalMs) * this.intervalMs;
  }

  /**
   * Runs the scenario as `gpusynth run --offline` backfills a store: pushing OTLP/HTTP protobuf
   * to `url`, paced by the receiver (the CLI's own path is cli/test/offline-push.test.ts; in
   * process here, without a process start per scenario); `store` answers the queries.
   */
  async run(url: string, store: PrometheusServer): Promise<void> {
    this.store = store;
    const delivery = new OtlpMetricsDelivery({ protocol: "http/protobuf", url, config: deliveryConfig({}, "metrics"), paced: true });
    await emitOffline(this.blueprint, delivery, { durationMs: this.durationMs, intervalMs: this.intervalMs });
    const { enqueued, delivered } = delivery.stats();
    expect(delivered).toEqual(enqueued);
  }

  get prometheus(): PrometheusServer {
    if (this.store === undefined) throw new Error("the scenario has not run");
    return this.store;
  }

  /** A documented query at a simulated instant, by default the run's end. */
  query(id: string, simulatedMs = this.durationMs): Promise<InstantSample[]> {
    return this.prometheus.query(documentedQuery(id), this.stamp(simulatedMs));
  }

  /** A documented query from `fromMs` (simulated) to the run's end, one step per scrape. */
  queryRange(id: string, fromMs = 0): Promise<RangeSeries[]> {
    return this.prometheus.queryRange(documentedQuery(id), this.stamp(fromMs), this.stamp(this.durationMs), this.intervalMs / 1000);
  }
}
