/**
 * One emulated scrape target in the OpenTelemetry SDK: a MeterProvider whose Resource is the
 * target's (the JS SDK binds one Resource to one MeterProvider) and a reader collected on demand,
 * whose MetricProducer — the SDK's extension point for metrics from outside its instruments —
 * hands over the target's samples exactly as the collector's prometheus receiver shapes a
 * scrape: its scope, names verbatim, no unit, double values; point time = scrape time; no start
 * time (the receiver sets one only from OpenMetrics' `_created` samples, which the vendors'
 * text format has none of); only the series the target exposes right now. Nothing is rewritten
 * after collection.
 */

import type { MetricFamily, Sample, ScrapeTarget } from "@gpusynth/constructs";
import type { UnixMs } from "@gpusynth/sim";
import { type HrTime, ValueType } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  type CollectionResult,
  type DataPoint,
  DataPointType,
  MeterProvider,
  type MetricData,
  type MetricProducer,
  MetricReader,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { RECEIVER_SCOPE_NAME, RECEIVER_SCOPE_VERSION, targetResourceAttributes } from "./receiver.js";

const NO_TIME: HrTime = [0, 0];
const SCOPE = { name: RECEIVER_SCOPE_NAME, version: RECEIVER_SCOPE_VERSION };
/** The reader keeps its MeterProvider's Resource and never reads a producer's: one empty one serves all. */
const UNREAD_RESOURCE = resourceFromAttributes({});

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** A reader collected on demand: gpusynth decides when a target is "scraped". */
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** The target's current scrape, as MetricData built straight from its samples. */
class ScrapeProducer implements MetricProducer {
  private samples: readonly Sample[] = [];
  private timeMs = 0;
  private readonly descriptors = new Map<MetricFamily, MetricData["descriptor"]>();

  set(samples: readonly Sample[], timeMs: number): void {
    this.samples = samples;
    this.timeMs = timeMs;
  }

  async collect(): Promise<CollectionResult> {
    const time = hrTime(this.timeMs);
    const byFamily = new Map<MetricFamily, DataPoint<number>[]>();
    for (const sample of this.samples) {
      const family = sample.family;
      let points = byFamily.get(family);
      if (points === undefined) {
        points = [];
        byFamily.set(family, points);
      }
      points.push({ attributes: sample.labels, startTime: NO_TIME, endTime: time, value: sample.value });
    }
    const metrics = [...byFamily].map(([family, points]) => this.metricOf(family, points));
    const resourceMetrics: ResourceMetrics = {
      resource: UNREAD_RESOURCE,
      scopeMetrics: metrics.length === 0 ? [] : [{ scope: SCOPE, metrics }],
    };
    return { resourceMetrics, errors: [] };
  }

  private metricOf(family: MetricFamily, dataPoints: DataPoint<number>[]): MetricData {
    let descriptor = this.descriptors.get(family);
    if (descriptor === undefined) {
      descriptor = { name: family.name, description: family.help, unit: "", valueType: ValueType.DOUBLE };
      this.descriptors.set(family, descriptor);
    }
    const aggregationTemporality = AggregationTemporality.CUMULATIVE;
    return family.type === "counter"
      ? { descriptor, dataPointType: DataPointType.SUM, aggregationTemporality, isMonotonic: true, dataPoints }
      : { descriptor, dataPointType: DataPointType.GAUGE, aggregationTemporality, dataPoints };
  }
}

export class TargetProvider {
  private readonly producer = new ScrapeProducer();
  private readonly reader = new OnDemandReader({ metricProducers: [this.producer] });
  private readonly provider: MeterProvider;

  constructor(readonly target: ScrapeTarget) {
    this.provider = new MeterProvider({ resource: resourceFromAttributes(targetResourceAttributes(target)), readers: [this.reader] });
  }

  /** Collects what the target exposes now, scraped at `timeMs` (Unix ms), through the SDK's reader. */
  async scrape(samples: readonly Sample[], timeMs: UnixMs): Promise<ResourceMetrics> {
    this.producer.set(samples, timeMs);
    const result = await this.reader.collect();
    if (result.errors.length > 0) throw new AggregateError(result.errors, `collecting ${this.target.job} failed`);
    return result.resourceMetrics;
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}
