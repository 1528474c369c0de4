/**
 * Scrapes every emulated target through its own MeterProvider (target-provider.ts, which stamps
 * points as the prometheus receiver stamps a real scrape) and hands each target's ResourceMetrics
 * to a sink.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { seriesOf, type TargetSamples } from "@gpusynth/constructs";
import type { UnixMs } from "@gpusynth/sim";
import { pointsOf } from "./delivery/requests.js";
import { targetKey } from "./receiver.js";
import { plainScrape, serviceMonitorScrape } from "./service-monitors.js";
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

  /**
   * `serviceMonitors`: the receiver finds the exporters through the cluster's ServiceMonitors
   * (a blueprint's `telemetry.serviceMonitors`), so their series carry the labels those give.
   */
  constructor(
    private readonly sink: MetricsSink,
    private readonly serviceMonitors = false,
  ) {}

  /**
   * Scrapes every target at `timeMs` (Unix ms) and exports each. Between targets it lets the
   * event loop turn when it has worked for a while (thousands of targets take seconds), and
   * stops when `signal` aborts.
   */
  async scrape(collected: readonly TargetSamples[], timeMs: UnixMs, signal?: AbortSignal): Promise<ScrapeReport> {
    let points = 0;
    let failedTargets = 0;
    let since = performance.now();
    const scraped = new Set<string>();
    for (const listed of collected) {
      const target = listed.target;
      if (performance.now() - since > YIELD_EVERY_MS) {
        await yieldToEventLoop();
        since = performance.now();
      }
      if (signal?.aborted === true) break;
      const key = targetKey(target);
      scraped.add(key);
      let provider = this.targets.get(key);
      if (provider === undefined) {
        provider = new TargetProvider(target, this.serviceMonitors ? serviceMonitorScrape(target) : plainScrape(target));
        this.targets.set(key, provider);
      }
      const metrics = await provider.scrape(seriesOf(listed), timeMs);
      points += pointsOf(metrics);
      if (!(await this.sink.export(metrics))) failedTargets++;
    }
    if (signal?.aborted !== true) points += await this.endTargetsGone(scraped, timeMs);
    await this.sink.forceFlush?.();
    return { targets: collected.length, points, failedTargets };
  }

  /**
   * The targets that left discovery since the last scrape (a node rebooting, an exporter pod
   * replaced): their series end stale, as the receiver's scrape loop ends them, and their
   * providers go.
   */
  private async endTargetsGone(scraped: ReadonlySet<string>, timeMs: UnixMs): Promise<number> {
    let points = 0;
    for (const [key, provider] of this.targets) {
      if (scraped.has(key)) continue;
      this.targets.delete(key);
      const metrics = await provider.ended(timeMs);
      await provider.shutdown();
      const stale = pointsOf(metrics);
      if (stale === 0) continue;
      points += stale;
      await this.sink.export(metrics);
    }
    return points;
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.targets.values()].map((provider) => provider.shutdown()));
    await this.sink.shutdown();
  }
}
