/**
 * Scrapes every emulated target through its own MeterProvider and hands each target's
 * ResourceMetrics to a sink, stamped as the prometheus receiver would stamp a real scrape:
 * point time = scrape time; cumulative start = first scrape of the series (reset when the value
 * goes down); gauges without a start time; only the series the target exposes right now.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Sample, TargetSamples } from "@gpusynth/constructs";
import type { HrTime } from "@opentelemetry/api";
import { DataPointType, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { targetKey } from "./receiver.js";
import type { MetricsSink } from "./sinks.js";
import { StartTimeAdjuster } from "./start-times.js";
import { TargetProvider } from "./target-provider.js";

export interface ScrapeReport {
  readonly targets: number;
  readonly points: number;
  readonly failedTargets: number;
}

const NO_TIME: HrTime = [0, 0];
/** Longest stretch of scraping between two turns of the event loop. */
const YIELD_EVERY_MS = 20;

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

function seriesKey(name: string, attributes: Readonly<Record<string, unknown>>): string {
  return `${name}\u0000${JSON.stringify(attributes)}`;
}

export class MetricsPipeline {
  private readonly targets = new Map<string, { provider: TargetProvider; starts: StartTimeAdjuster }>();

  constructor(private readonly sink: MetricsSink) {}

  /**
   * Scrapes every target at `timeMs` (Unix ms) and exports each. Between targets it lets the
   * event loop turn when it has worked for a while (thousands of targets take seconds), and
   * stops when `signal` aborts.
   */
  async scrape(collected: readonly TargetSamples[], timeMs: number, signal?: AbortSignal): Promise<ScrapeReport> {
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
      let entry = this.targets.get(key);
      if (entry === undefined) {
        entry = { provider: new TargetProvider(target), starts: new StartTimeAdjuster() };
        this.targets.set(key, entry);
      }
      const metrics = await entry.provider.scrape(samples);
      points += restamp(metrics, samples, timeMs, entry.starts);
      if (!(await this.sink.export(metrics))) failedTargets++;
    }
    return { targets: collected.length, points, failedTargets };
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.targets.values()].map(({ provider }) => provider.shutdown()));
    await this.sink.shutdown();
  }
}

/** Applies the receiver's timestamps and drops series the target no longer exposes; returns the point count. */
function restamp(metrics: ResourceMetrics, samples: readonly Sample[], timeMs: number, starts: StartTimeAdjuster): number {
  const exposed = new Set(samples.map((s) => seriesKey(s.family.name, s.labels)));
  const seen = new Set<string>();
  const time = hrTime(timeMs);
  let points = 0;
  for (const scope of metrics.scopeMetrics) {
    scope.metrics = scope.metrics.filter((metric) => {
      const name = metric.descriptor.name;
      const kept = (metric.dataPoints as Array<{ attributes: Record<string, unknown> }>).filter((p) =>
        exposed.has(seriesKey(name, p.attributes)),
      );
      if (kept.length === 0) return false;
      for (const point of kept as Array<{ attributes: Record<string, unknown>; value: number; startTime: HrTime; endTime: HrTime }>) {
        const key = seriesKey(name, point.attributes);
        seen.add(key);
        point.endTime = time;
        point.startTime = metric.dataPointType === DataPointType.SUM ? hrTime(starts.startOf(key, point.value, timeMs)) : NO_TIME;
      }
      (metric as { dataPoints: unknown[] }).dataPoints = kept;
      points += kept.length;
      return true;
    });
  }
  starts.retain(seen);
  return points;
}
