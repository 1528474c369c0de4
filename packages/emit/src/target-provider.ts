/**
 * One emulated scrape target in the OpenTelemetry SDK: a MeterProvider whose Resource is the
 * target's (the JS SDK binds one Resource to one MeterProvider) and a reader collected on demand,
 * whose MetricProducer — the SDK's extension point for metrics from outside its instruments —
 * hands over the target's samples exactly as the collector's prometheus receiver shapes a
 * scrape: its scope, names verbatim, no unit, double values; point time = scrape time; no start
 * time (the receiver sets one only from OpenMetrics' `_created` samples, which the vendors'
 * text format has none of); the series the target exposes right now, and a stale point for each
 * series it exposed at the previous scrape and no longer does (staleness.ts). Nothing is
 * rewritten after collection.
 */

import { type MetricFamily, pointOf, type Sample, type ScrapeTarget, SERIES_LABELS } from "@gpusynth/constructs";
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
import { RECEIVER_SCOPE_NAME, RECEIVER_SCOPE_VERSION, SCRAPE_REPORT, targetResourceAttributes } from "./receiver.js";
import type { TargetScrape } from "./service-monitors.js";
import { staleByFamily } from "./staleness.js";

const NO_TIME: HrTime = [0, 0];
const NO_SAMPLES: readonly Sample[] = Object.freeze([]);
const NO_POINTS: readonly HeldPoint[] = Object.freeze([]);
const SCOPE = { name: RECEIVER_SCOPE_NAME, version: RECEIVER_SCOPE_VERSION };
/** The reader keeps its MeterProvider's Resource and never reads a producer's: one empty one serves all. */
const UNREAD_RESOURCE = resourceFromAttributes({});

/** A reader collected on demand: gpusynth decides when a target is "scraped". */
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** A point of a scrape: a series' sample that is its own point, a LabelledPoint, a report's or a stale one. */
type HeldPoint = DataPoint<number>;

/**
 * The point of a series whose sample is not one a source keeps (a plain Sample: a test's), kept
 * from one scrape to the next: its value is its sample's, read where it is written, rather than a
 * copy (a number field V8 keeps in a box of its own).
 */
class LabelledPoint implements DataPoint<number> {
  readonly startTime = NO_TIME;
  constructor(
    readonly attributes: Readonly<Record<string, string>>,
    readonly endTime: HrTime,
    public sample: Sample,
  ) {}

  get value(): number {
    return this.sample.value;
  }
}

/**
 * The target's current scrape, as MetricData built straight from its samples.
 *
 * A series keeps its DataPoint from one scrape to the next, as a Prometheus exporter keeps its
 * series: its Sample is its DataPoint (catalogue.ts PointSample), its value set by its source, its
 * attributes (the labels with the target's) and time by the scrape. A sample of a source that keeps
 * none (a test's) gets a LabelledPoint, which reads its value; the point in the same place of the
 * family's previous scrape is found without a lookup: sources list their series
 * in a stable order and keep a series' label set while its subject lives. What a collect hands over is therefore
 * valid until the target's next scrape: the OTLP encoders and the SDK's exporters read it at once
 * (sinks.ts gives a stock exporter, which may keep it, a copy).
 */
class ScrapeProducer implements MetricProducer {
  private samples: readonly Sample[] = [];
  private timeMs = 0;
  /** The previous scrape's points by family, its stale ones apart: what a series missing now is stale against, and what a series still there reuses. */
  private previous = new Map<MetricFamily, HeldPoint[]>();
  /**
   * The lists of the scrape before that, which this scrape writes its points over: a platform
   * scrape's 412,000 points listed in new arrays each time lived until the next scrape, so every
   * list was promoted to V8's old generation, and garbage there.
   */
  private recycled = new Map<MetricFamily, HeldPoint[]>();
  /** Each family's MetricData, its points set at each scrape (valid until the next, as the points are). */
  private readonly metrics = new Map<MetricFamily, MetricData>();
  /** Every point's end time, the scrape's: one array, set at each scrape. */
  private readonly time: [number, number] = [0, 0];

  /**
   * The scrape report's series before the target's labels are added: none of its own, but a
   * series label set (catalogue.ts), one per target, so the report's series with its target's
   * labels keeps its bytes in the encoders as every other series does.
   */
  private readonly reportLabels: Readonly<Record<string, string>> = Object.create(SERIES_LABELS);

  constructor(private readonly scrape: TargetScrape) {}

  /** Whether the target answered this scrape (a target that left answers none: only its stale markers are sent). */
  private answered = false;

  set(samples: readonly Sample[], timeMs: number, answered: boolean): void {
    this.samples = samples;
    this.timeMs = timeMs;
    this.answered = answered;
  }

  async collect(): Promise<CollectionResult> {
    const time = this.time;
    const seconds = Math.floor(this.timeMs / 1000);
    time[0] = seconds;
    time[1] = Math.round((this.timeMs - seconds * 1000) * 1e6);
    const previous = this.previous;
    const recycled = this.recycled;
    const byFamily = new Map<MetricFamily, HeldPoint[]>();
    /** How many points a family has listed, kept when another family's come between. */
    const counts = new Map<MetricFamily, number>();
    // A family's samples mostly come together: its lists are looked up when the family changes.
    let family: MetricFamily | undefined;
    let points: HeldPoint[] = [];
    let listed = 0;
    let before: readonly HeldPoint[] = NO_POINTS;
    let kept = 0;
    // An index, not an iterator: for…of made an iterator result per sample here (1.2 million a hyperscale shard's scrape).
    const samples = this.samples;
    for (let i = 0; i < samples.length; i++) {
      const sample = samples[i] as Sample;
      const labels = this.scrape.labelsOf(sample.family.name, sample.labels);
      if (labels === undefined) continue;
      kept++;
      if (sample.family !== family) {
        if (family !== undefined) counts.set(family, listed);
        family = sample.family;
        const known = byFamily.get(family);
        if (known === undefined) {
          points = recycled.get(family) ?? [];
          byFamily.set(family, points);
          listed = 0;
        } else {
          points = known;
          listed = counts.get(family) ?? 0;
        }
        before = previous.get(family) ?? NO_POINTS;
      }
      // A series' sample is its own point: its attributes the labels the target gives it (its own
      // labels where it adds none), its time the scrape's. A sample is its target's alone.
      const own = pointOf(sample);
      if (own !== undefined) {
        own.attributes = labels;
        own.endTime = time;
        points[listed++] = own as HeldPoint;
        continue;
      }
      // A sample of a source that keeps no Sample of its own (a test's): the same series in the same place as at the last scrape keeps its point.
      const held = before[listed];
      if (held instanceof LabelledPoint && held.attributes === labels) {
        held.sample = sample;
        points[listed++] = held;
      } else points[listed++] = new LabelledPoint(labels, time, sample);
    }
    if (family !== undefined) counts.set(family, listed);
    // A list written over from the start ends where this scrape's points do (V8 shortens it in place).
    for (const [f, list] of byFamily) list.length = counts.get(f) ?? 0;
    // The scrape loop's report on the scrape, with the target's labels alone.
    const report = new Map<MetricFamily, HeldPoint[]>();
    if (this.answered) {
      const labels = this.scrape.labelsOf(SCRAPE_REPORT.up.name, this.reportLabels) ?? this.reportLabels;
      for (const [family, value] of [
        [SCRAPE_REPORT.up, 1],
        [SCRAPE_REPORT.samplesScraped, this.samples.length],
        [SCRAPE_REPORT.samplesPostRelabeling, kept],
      ] as const)
        report.set(family, [{ attributes: labels, startTime: NO_TIME, endTime: time, value }]);
    }
    // As the receiver's scrape loop appends them: a family's stale markers after its scraped
    // series, then the families no series of which is left, then the report (scrape/scrape.go:
    // append, then report).
    const stale = staleByFamily(previous, (family) => byFamily.get(family) ?? report.get(family), time, NO_TIME);
    // The samples are read: kept until the next scrape, a scrape's hundreds of thousands would all
    // outlive V8's young generation, to be marked by every full collection in between.
    this.samples = NO_SAMPLES;
    const metrics = [...byFamily].map(([family, points]) => {
      const ended = stale.get(family);
      return this.metricOf(family, ended === undefined ? points : [...points, ...ended]);
    });
    for (const [family, ended] of stale) if (!byFamily.has(family)) metrics.push(this.metricOf(family, [...ended]));
    for (const [family, points] of report) {
      metrics.push(this.metricOf(family, points));
      byFamily.set(family, points);
    }
    this.recycled = previous;
    this.previous = byFamily;
    const resourceMetrics: ResourceMetrics = {
      resource: UNREAD_RESOURCE,
      scopeMetrics: metrics.length === 0 ? [] : [{ scope: SCOPE, metrics }],
    };
    return { resourceMetrics, errors: [] };
  }

  private metricOf(family: MetricFamily, dataPoints: DataPoint<number>[]): MetricData {
    let metric = this.metrics.get(family);
    if (metric === undefined) {
      const descriptor = { name: family.name, description: family.help, unit: "", valueType: ValueType.DOUBLE };
      const aggregationTemporality = AggregationTemporality.CUMULATIVE;
      metric =
        family.type === "counter"
          ? { descriptor, dataPointType: DataPointType.SUM, aggregationTemporality, isMonotonic: true, dataPoints }
          : { descriptor, dataPointType: DataPointType.GAUGE, aggregationTemporality, dataPoints };
      this.metrics.set(family, metric);
    } else (metric as { dataPoints: DataPoint<number>[] }).dataPoints = dataPoints;
    return metric;
  }
}

export class TargetProvider {
  private readonly producer: ScrapeProducer;
  private readonly reader: OnDemandReader;
  private readonly provider: MeterProvider;

  /** `scrape`: how the receiver finds the target (service-monitors.ts): its job, instance and series labels. */
  constructor(
    readonly target: ScrapeTarget,
    scrape: TargetScrape,
  ) {
    this.producer = new ScrapeProducer(scrape);
    this.reader = new OnDemandReader({ metricProducers: [this.producer] });
    this.provider = new MeterProvider({
      resource: resourceFromAttributes(targetResourceAttributes(target, scrape)),
      readers: [this.reader],
    });
  }

  /** Collects what the target exposes now, scraped at `timeMs` (Unix ms), through the SDK's reader. */
  async scrape(samples: readonly Sample[], timeMs: UnixMs): Promise<ResourceMetrics> {
    this.producer.set(samples, timeMs, true);
    return this.collected();
  }

  private async collected(): Promise<ResourceMetrics> {
    const result = await this.reader.collect();
    if (result.errors.length > 0) throw new AggregateError(result.errors, `collecting ${this.target.job} failed`);
    return result.resourceMetrics;
  }

  /**
   * The target left: every series of its last scrape stale at `timeMs`, when its next scrape
   * would have been (Prometheus' end-of-run staleness); no points when it had none.
   */
  async ended(timeMs: UnixMs): Promise<ResourceMetrics> {
    this.producer.set([], timeMs, false);
    return this.collected();
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}
