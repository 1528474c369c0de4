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

import { type LabelSet, type MetricFamily, type ScrapeTarget, SERIES_LABELS, SeriesColumns } from "@gpusynth/constructs";
import type { UnixMs } from "@gpusynth/sim";
import { type HrTime, ValueType } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  type CollectionResult,
  MeterProvider,
  type MetricData,
  type MetricDescriptor,
  type MetricProducer,
  MetricReader,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { ColumnMetric, type PointColumns } from "./column-metric.js";
import { RECEIVER_SCOPE_NAME, RECEIVER_SCOPE_VERSION, SCRAPE_REPORT, targetResourceAttributes } from "./receiver.js";
import type { TargetScrape } from "./service-monitors.js";
import { staleOf } from "./staleness.js";

const NO_TIME: HrTime = [0, 0];
const NO_SERIES = new SeriesColumns();
const NO_LABELS: readonly LabelSet[] = Object.freeze([]);
const NO_VALUES: readonly number[] = Object.freeze([]);
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

/**
 * A family's MetricDescriptor, one for every target that lists the family: what an encoder keeps
 * of a metric's header (its name and help, metrics-encoder.ts) is kept once per family. Made per
 * target and family, a platform run's 25,000 descriptors each had their header encoded and kept in
 * a buffer of its own (each an ArrayBuffer, with memory outside the heap).
 */
function descriptorOf(family: MetricFamily): MetricDescriptor {
  let descriptor = descriptors.get(family);
  if (descriptor === undefined) {
    descriptor = { name: family.name, description: family.help, unit: "", valueType: ValueType.DOUBLE };
    descriptors.set(family, descriptor);
  }
  return descriptor;
}
const descriptors = new WeakMap<MetricFamily, MetricDescriptor>();

/**
 * One family of the target, from one scrape to the next: its series' label sets and values in this
 * scrape and the label sets of the scrape before (what a series missing now is stale against), as
 * lists written over at each scrape. Made the first time the family is scraped and kept, so a scrape
 * of a steady target makes no list or map: a platform scrape's 1,500 targets made three maps each,
 * their iterators and a list of their entries, and kept the maps until the next scrape (promoted to
 * V8's old generation, to be marked by the next full collection).
 */
class FamilySlot {
  /** This scrape's series' label sets, as far as `count`: the list of the scrape before last's, written over. */
  private labels: LabelSet[] = [];
  /** Their values: numbers only, so V8 keeps them unboxed. */
  private values: number[] = [];
  /** The last scrape's label sets, as far as `beforeCount` (while this scrape has not listed the family, they are still in `labels`). */
  private before: LabelSet[] = [];
  /**
   * Whether `labels` and `values` are lists made to the size of a scrape (`made`), not grown by
   * writes past their end: V8 grows a list by half again and 16 places each time, so the lists of a
   * family of a few series on each of a platform run's 25,000 target-and-family slots held about
   * four times the places they used (20 MiB). A list that grew is made to size at the next scrape.
   */
  private labelsMade = false;
  private beforeMade = false;
  private valuesMade = false;
  private count = 0;
  private beforeCount = 0;
  /** The last scrape that listed the family (ScrapeProducer.scrapes). */
  listedAt = -1;
  private readonly descriptor: MetricDescriptor;

  constructor(readonly family: MetricFamily) {
    this.descriptor = descriptorOf(family);
  }

  /** Lists the family in scrape `scrape`, the first time in it: the last scrape's label sets become `before`. */
  list(scrape: number): void {
    const last = this.count;
    if (this.listedAt === scrape - 1) {
      const spare = this.before;
      this.before = this.labels;
      this.labels = spare;
      const spareMade = this.beforeMade;
      this.beforeMade = this.labelsMade;
      this.labelsMade = spareMade;
      this.beforeCount = last;
    } else {
      // Not listed the scrape before: nothing is stale against it.
      this.beforeCount = 0;
    }
    // Lists that grew are made to the size of the last scrape's (a family's series mostly hold).
    if (!this.labelsMade && last > 0) {
      this.labels = new Array(last);
      this.labelsMade = true;
    }
    if (!this.valuesMade && last > 0) {
      this.values = new Array(last);
      this.valuesMade = true;
    }
    this.listedAt = scrape;
    this.count = 0;
  }

  /** Adds a series to this scrape's: its attributes (its label set, with its target's labels) and value. */
  add(labels: LabelSet, value: number): void {
    const at = this.count++;
    // Written past its end, a list grows with room to spare: it is made to size again at the next scrape.
    if (at >= this.labels.length) this.labelsMade = false;
    if (at >= this.values.length) this.valuesMade = false;
    this.labels[at] = labels;
    this.values[at] = value;
  }

  /** The family's MetricData in this scrape, which lists it: its series' points, then a stale marker for each series of the scrape before missing now. */
  metricNow(time: HrTime): MetricData {
    const { labels, count } = this;
    // What lies past this scrape's series would keep label sets alive (V8 shortens a list in place).
    labels.length = count;
    this.values.length = count;
    const stale = staleOf(this.before, this.beforeCount, labels, count, time, NO_TIME);
    return this.metric({ attributes: labels, values: this.values, count, startTime: NO_TIME, endTime: time, stale });
  }

  /** The metric of the stale markers of every series of the last scrape that listed the family, which this one does not; undefined when it had none. */
  allStale(time: HrTime): MetricData | undefined {
    const stale = staleOf(this.labels, this.count, NO_LABELS, 0, time, NO_TIME);
    if (stale.length === 0) return undefined;
    return this.metric({ attributes: NO_LABELS, values: NO_VALUES, count: 0, startTime: NO_TIME, endTime: time, stale });
  }

  /** The family's metric of `columns`, made for this scrape (a metric kept would keep what it holds alive). */
  private metric(columns: PointColumns): MetricData {
    return new ColumnMetric(
      this.descriptor,
      this.family.type === "counter",
      columns,
      0,
      columns.count + columns.stale.length,
    ) as MetricData;
  }
}

/**
 * The target's current scrape, as MetricData built straight from its series' columns.
 *
 * A series keeps its label set from one scrape to the next, as a Prometheus exporter keeps its
 * series, and its point is two places in its family's lists (FamilySlot): its attributes (the label
 * set, with the labels its target adds) and its value; its time is the scrape's. Sources list their
 * series in a stable order and keep a series' label set while its subject lives, so the series of
 * the family's previous scrape are compared in place, without a lookup (staleness.ts). The OTLP
 * encoders and the SDK's exporters read what a collect hands over at once (sinks.ts gives a stock
 * exporter, which may keep it, a copy).
 */
class ScrapeProducer implements MetricProducer {
  private series: SeriesColumns = NO_SERIES;
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
  /** Every point's end time, the scrape's: one array, set at each scrape. */
  private readonly time: [number, number] = [0, 0];

  /**
   * The scrape report's series before the target's labels are added: none of its own, but a
   * series label set (catalogue.ts), one per target, so the report's series with its target's
   * labels keeps its bytes in the encoders as every other series does.
   */
  private readonly reportBase: LabelSet = Object.create(SERIES_LABELS);
  /** The report's series' label set (up, samples scraped, samples after relabelling), made at the first scrape the target answers. */
  private report: LabelSet | undefined;

  constructor(private readonly scrape: TargetScrape) {}

  /** Whether the target answered this scrape (a target that left answers none: only its stale markers are sent). */
  private answered = false;

  set(series: SeriesColumns, timeMs: number, answered: boolean): void {
    this.series = series;
    this.timeMs = timeMs;
    this.answered = answered;
  }

  /** The family's slot, listed in this scrape. */
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
    const { families, labels: labelSets, values, count } = this.series;
    // A family's series mostly come together: its slot is looked up when the family changes.
    let slot: FamilySlot | undefined;
    let kept = 0;
    for (let i = 0; i < count; i++) {
      const family = families[i] as MetricFamily;
      const labels = this.scrape.labelsOf(family.name, labelSets[i] as LabelSet);
      if (labels === undefined) continue;
      kept++;
      if (family !== slot?.family) slot = this.slotListed(family, scrape);
      slot.add(labels, values[i] as number);
    }
    const sampled = this.listedCount;
    // The scrape loop's report on the scrape, with the target's labels alone.
    if (this.answered) {
      const labels = this.reportLabels();
      this.slotListed(SCRAPE_REPORT.up, scrape).add(labels, 1);
      this.slotListed(SCRAPE_REPORT.samplesScraped, scrape).add(labels, count);
      this.slotListed(SCRAPE_REPORT.samplesPostRelabeling, scrape).add(labels, kept);
    }
    // The columns are read: the source writes over them at its next collect.
    this.series = NO_SERIES;
    listed.length = this.listedCount;
    // As the receiver's scrape loop appends them: a family's stale markers after its scraped
    // series, then the families no series of which is left, then the report (scrape/scrape.go:
    // append, then report). Made for this collect, as its points: nothing here holds them after.
    const metrics: MetricData[] = [];
    for (let i = 0; i < sampled; i++) metrics.push((listed[i] as FamilySlot).metricNow(time));
    for (let i = 0; i < listedBefore.length; i++) {
      const s = listedBefore[i] as FamilySlot;
      if (s.listedAt === scrape) continue;
      // Listed the scrape before and not now: every series of it is stale.
      const ended = s.allStale(time);
      if (ended !== undefined) metrics.push(ended);
    }
    for (let i = sampled; i < listed.length; i++) metrics.push((listed[i] as FamilySlot).metricNow(time));
    if (metrics.length === 0) return NOTHING_COLLECTED;
    return { resourceMetrics: { resource: UNREAD_RESOURCE, scopeMetrics: [{ scope: SCOPE, metrics }] }, errors: [] };
  }

  /** The report's label set: the target's labels alone, made the first time. */
  private reportLabels(): LabelSet {
    this.report ??= this.scrape.labelsOf(SCRAPE_REPORT.up.name, this.reportBase) ?? this.reportBase;
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
  async scrape(series: SeriesColumns, timeMs: UnixMs): Promise<ResourceMetrics> {
    this.producer.set(series, timeMs, true);
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
    this.producer.set(NO_SERIES, timeMs, false);
    return this.collected();
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}
