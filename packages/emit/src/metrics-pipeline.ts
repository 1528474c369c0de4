/**
 * Scrapes every emulated target through its own MeterProvider (target-provider.ts, which stamps
 * points as the prometheus receiver stamps a real scrape) and hands each target's ResourceMetrics
 * to a sink.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { TargetSamples } from "@gpusynth/constructs";
import type { UnixMs } from "@gpusynth/sim";
import { pointsOf } from "./delivery/requests.js";
import { targetKey } from "./receiver.js";
import type { MetricsSink } from "./sinks.js";
import { TargetProvider } from "./target-provider.js";

export interface ScrapeReport {
  readonly targets: number;
  readonly points: number;
  readonly failedTargets: number;
}

/** Longest stretch of scraping between two turns of the event loop. */
const YIELD_EVERY_MS = 20;

export class MetricsPipeline {
  private readonly targets = new Map<string, TargetProvider>();

  constructor(private readonly sink: MetricsSink) {}

  /**
   * Scrapes every target at `timeMs` (Unix ms) and exports each. Between targets it lets the
   * event loop turn when it has worked for a while (thousands of targets take seconds), and
   * stops when `signal` aborts.
   */
  async scrape(collected: readonly TargetSamples[], timeMs: UnixMs, signal?: AbortSignal): Promise<ScrapeReport> {
    let points = 0;
    let failedTargets = 0;
    let since = performance.now();
    for (const { target, samples } of collected) {
      if (performance.now() - since > YIELD_EVERY_MS) {
        await yieldToEventLoop();
        since = performance.now();
      }
      if (signal?.aborted === true) break;
      const key = targetKey(target);
      let provider = this.targets.get(key);
      if (provider === undefined) {
        provider = new TargetProvider(target);
        this.targets.set(key, provider);
      }
      const metrics = await provider.scrape(samples, timeMs);
      points += pointsOf(metrics);
      if (!(await this.sink.export(metrics))) failedTargets++;
    }
    return { targets: collected.length, points, failedTargets };
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.targets.values()].map((provider) => provider.shutdown()));
    await this.sink.shutdown();
  }
}
