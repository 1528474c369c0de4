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
import { staleOf } from "./staleness.js";

const NO_TIME: HrTime = [0, 0];
const NO_SAMPLES: readonly Sample[] = Object.freeze([]);
const NO_POINTS: readonly HeldPoint[] = Object.freeze([]);
const SCOPE = { name: RECEIVER_SCOPE_NAME, version: RECEIVER_SCOPE_VERSION };
/** The reader keeps its MeterProvider's Resource and never reads a producer's: one empty one serves all. */
const UNREAD_RESOURCE = resourceFromAttributes({});
/** A collect with no metric (a target that left with no series): the SDK's reader reads it, never changes it. */
const NOTHING_COLLECTED: CollectionResult = { resourceMetrics: { resource: UNREAD_RESOURCE, scopeMetrics: [] }, errors: [] };

/** A reader collected on demand: gpusynth decides when a target is "scraped". */
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** A point of a scrape: a series' sample that is its own point, a LabelledPoint, a report's or a stale one. */
type HeldPoint = DataPoint<number>;

/** A point of the scrape report's (up, the samples scraped and kept), its value set at each scrape. */
interface ReportPoint extends DataPoint<number> {
  value: number;
}

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
 * One family of the target, from one scrape to the next: its points listed now, those of the
 * scrape before (what a series missing now is stale against, and what a series still there reuses),
 * and its MetricData. Made the first time the family is scraped and kept, so a scrape of a steady
 * target makes no map, list or MetricData: a platform scrape's 1,500 targets made three maps each,
 * their iterators and a list of their entries, and kept the maps until the next scrape (promoted to
 * V8's old generation, to be marked by the next full collection).
 */
class FamilySlot {
  /**
   * This scrape's points, as far as `count`, then its stale markers (metricNow): the list of the
   * scrape before last's, written over.
   */
  points: HeldPoint[] = [];
  /** The last scrape's points, as far as `beforeCount` (while this scrape has not listed the family, they are still in `points`). */
  before: HeldPoint[] = [];
  count = 0;
  beforeCount = 0;
  /** The last scrape that listed the family (ScrapeProducer.scrapes). */
  listedAt = -1;
  readonly metric: MetricData;

  constructor(readonly family: MetricFamily) {
    const descriptor = { name: family.name, description: family.help, unit: "", valueType: ValueType.DOUBLE };
    const aggregationTemporality = AggregationTemporality.CUMULATIVE;
    const dataPoints: DataPoint<number>[] = [];
    this.metric =
      family.type === "counter"
        ? { descriptor, dataPointType: DataPointType.SUM, aggregationTemporality, isMonotonic: true, dataPoints }
        : { descriptor, dataPointType: DataPointType.GAUGE, aggregationTemporality, dataPoints };
  }

  /** Lists the family in scrape `scrape`, the first time in it: the last scrape's points become `before`. */
  list(scrape: number): void {
    if (this.listedAt === scrape - 1) {
      const spare = this.before;
      this.before = this.points;
      this.points = spare;
      this.beforeCount = this.count;
    } else {
      // Not listed the scrape before: nothing is stale against it, nothing reused.
      this.before.length = 0;
      this.beforeCount = 0;
    }
    this.listedAt = scrape;
    this.count = 0;
  }

  /**
   * The family's MetricData in this scrape, which lists it: its points, then a stale marker for
   * each series of the scrape before missing now, written after them in the same list. (A list
   * of both made anew held a copy of every point of a family that lost a series — about 140
   * families and 90,000 points a platform scrape — until the next scrape.)
   */
  metricNow(time: HrTime): MetricData {
    const points = this.points;
    const ended = staleOf(this.before, this.beforeCount, points, this.count, time, NO_TIME);
    let n = this.count;
    for (let i = 0; i < ended.length; i++) points[n++] = ended[i] as HeldPoint;
    // A list written over from the start ends where this scrape's points do (V8 shortens it in place).
    points.length = n;
    return this.metricWith(points);
  }

  /** The stale markers of every series of the last scrape that listed the family, which this one does not. */
  allStale(time: HrTime): readonly DataPoint<number>[] {
    return staleOf(this.points, this.count, NO_POINTS, 0, time, NO_TIME);
  }

  /** The family's MetricData, holding `points`. */
  metricWith(points: DataPoint<number>[]): MetricData {
    (this.metric as { dataPoints: DataPoint<number>[] }).dataPoints = points;
    return this.metric;
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
  /** How many scrapes the target has had: which scrape listed a family last (FamilySlot.listedAt). */
  private scrapes = 0;
  /** Each family the target has listed, by the family. */
  private readonly slots = new Map<MetricFamily, FamilySlot>();
  /**
   * The families this scrape lists, in the order they first come (as far as `listedCount`), and
   * those the scrape before listed: two lists, swapped, each written over from its start. (Emptied
   * with `length = 0`, V8 would let go of a list's storage, and grow it anew at every scrape.)
   */
  private listed: FamilySlot[] = [];
  private listedCount = 0;
  private listedBefore: FamilySlot[] = [];
  /** This scrape's MetricData, in the receiver's order; the scrape before's is written over. */
  private readonly metrics: MetricData[] = [];
  /** Every point's end time, the scrape's: one array, set at each scrape. */
  private readonly time: [number, number] = [0, 0];

  /**
   * The scrape report's series before the target's labels are added: none of its own, but a
   * series label set (catalogue.ts), one per target, so the report's series with its target's
   * labels keeps its bytes in the encoders as every other series does.
   */
  private readonly reportLabels: Readonly<Record<string, string>> = Object.create(SERIES_LABELS);
  /** The report's three points (up, samples scraped, samples after relabelling), made at the first scrape the target answers. */
  private report: { up: ReportPoint; scraped: ReportPoint; kept: ReportPoint } | undefined;

  constructor(private readonly scrape: TargetScrape) {}

  /** Whether the target answered this scrape (a target that left answers none: only its stale markers are sent). */
  private answered = false;

  set(samples: readonly Sample[], timeMs: number, answered: boolean): void {
    this.samples = samples;
    this.timeMs = timeMs;
    this.answered = answered;
  }

  /** The family's slot, listed in this scrape: its points' list ready to be written from `count`. */
  private slotListed(family: MetricFamily, scrape: number): FamilySlot {
    let slot = this.slots.get(family);
    if (slot === undefined) {
      slot = new FamilySlot(family);
      this.slots.set(family, slot);
    }
    if (slot.listedAt !== scrape) {
      slot.list(scrape);
      this.listed[this.listedCount++] = slot;
    }
    return slot;
  }

  async collect(): Promise<CollectionResult> {
    const time = this.time;
    const seconds = Math.floor(this.timeMs / 1000);
    time[0] = seconds;
    time[1] = Math.round((this.timeMs - seconds * 1000) * 1e6);
    const scrape = ++this.scrapes;
    const listedBefore = this.listed;
    const listed = this.listedBefore;
    this.listed = listed;
    this.listedCount = 0;
    this.listedBefore = listedBefore;
    // A family's samples mostly come together: its slot is looked up when the family changes.
    let slot: FamilySlot | undefined;
    let points = NO_POINTS as HeldPoint[];
    let count = 0;
    let before: readonly HeldPoint[] = NO_POINTS;
    let kept = 0;
    // An index, not an iterator: for…of made an iterator result per sample here (1.2 million a hyperscale shard's scrape).
    const samples = this.samples;
    for (let i = 0; i < samples.length; i++) {
      const sample = samples[i] as Sample;
      const labels = this.scrape.labelsOf(sample.family.name, sample.labels);
      if (labels === undefined) continue;
      kept++;
      if (sample.family !== slot?.family) {
        if (slot !== undefined) slot.count = count;
        slot = this.slotListed(sample.family, scrape);
        points = slot.points;
        count = slot.count;
        before = slot.before;
      }
      // A series' sample is its own point: its attributes the labels the target gives it (its own
      // labels where it adds none), its time the scrape's. A sample is its target's alone.
      const own = pointOf(sample);
      if (own !== undefined) {
        own.attributes = labels;
        own.endTime = time;
        points[count++] = own as HeldPoint;
        continue;
      }
      // A sample of a source that keeps no Sample of its own (a test's): the same series in the same place as at the last scrape keeps its point.
      const held = before[count];
      if (held instanceof LabelledPoint && held.attributes === labels) {
        held.sample = sample;
        points[count++] = held;
      } else points[count++] = new LabelledPoint(labels, time, sample);
    }
    if (slot !== undefined) slot.count = count;
    const sampled = this.listedCount;
    // The scrape loop's report on the scrape, with the target's labels alone.
    if (this.answered) {
      const report = this.reportPoints();
      report.up.value = 1;
      report.scraped.value = this.samples.length;
      report.kept.value = kept;
      this.listReport(SCRAPE_REPORT.up, report.up, scrape);
      this.listReport(SCRAPE_REPORT.samplesScraped, report.scraped, scrape);
      this.listReport(SCRAPE_REPORT.samplesPostRelabeling, report.kept, scrape);
    }
    // The samples are read: kept until the next scrape, a scrape's hundreds of thousands would all
    // outlive V8's young generation, to be marked by every full collection in between.
    this.samples = NO_SAMPLES;
    listed.length = this.listedCount;
    // As the receiver's scrape loop appends them: a family's stale markers after its scraped
    // series, then the families no series of which is left, then the report (scrape/scrape.go:
    // append, then report).
    const metrics = this.metrics;
    let n = 0;
    for (let i = 0; i < sampled; i++) metrics[n++] = (listed[i] as FamilySlot).metricNow(time);
    for (let i = 0; i < listedBefore.length; i++) {
      const s = listedBefore[i] as FamilySlot;
      if (s.listedAt === scrape) continue;
      // Listed the scrape before and not now: every series of it is stale.
      const ended = s.allStale(time);
      if (ended.length > 0) metrics[n++] = s.metricWith([...ended]);
    }
    for (let i = sampled; i < listed.length; i++) metrics[n++] = (listed[i] as FamilySlot).metricNow(time);
    metrics.length = n;
    return n === 0 ? NOTHING_COLLECTED : this.collected;
  }

  /** What every collect that lists a metric hands over: the list `metrics`, written over by each. */
  private readonly collected: CollectionResult = {
    resourceMetrics: { resource: UNREAD_RESOURCE, scopeMetrics: [{ scope: SCOPE, metrics: this.metrics }] },
    errors: [],
  };

  /** Lists a family of the scrape report, its one point `point`. */
  private listReport(family: MetricFamily, point: ReportPoint, scrape: number): void {
    const slot = this.slotListed(family, scrape);
    slot.points[0] = point;
    slot.points.length = 1;
    slot.count = 1;
  }

  private reportPoints(): { up: ReportPoint; scraped: ReportPoint; kept: ReportPoint } {
    if (this.report === undefined) {
      const labels = this.scrape.labelsOf(SCRAPE_REPORT.up.name, this.reportLabels) ?? this.reportLabels;
      const point = (): ReportPoint => ({ attributes: labels, startTime: NO_TIME, endTime: this.time, value: 0 });
      this.report = { up: point(), scraped: point(), kept: point() };
    }
    return this.report;
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
