/**
 * A scrape's metric with its points kept as columns (target-provider.ts), which gpusynth's encoders
 * (protobuf and OTLP JSON) and the request split read without a DataPoint object per series.
 *
 * A platform scrape is about 450,000 points. Kept from one scrape to the next as objects, they were
 * 450,000 objects for every full garbage collection to mark; made anew at each scrape, a large
 * target's (kube-state-metrics': 170,000) outlived V8's young generation while it was encoded and
 * were promoted, to be marked by the next full collection. As columns a scrape makes no object per
 * series: a family's label sets and values are two lists its slot keeps and writes over.
 *
 * It is still the SDK's MetricData: `dataPoints` makes the DataPoints when something else reads
 * them (the SDK's serializers, a stock exporter, a test), once per metric.
 * As that is a getter of the class, a spread of the metric (`{ ...metric }`) does not carry it: a
 * copy names its points (`{ ...metric, dataPoints }`, as sinks.ts' metricsKept does).
 */
import type { LabelSet } from "@gpusynth/constructs";
import type { HrTime } from "@opentelemetry/api";
import { AggregationTemporality, type DataPoint, DataPointType, type MetricData, type MetricDescriptor } from "@opentelemetry/sdk-metrics";

/** A family's points in one scrape: its series', then its stale markers. */
export interface PointColumns {
  /** Each series' attributes (its label set, with the labels its target adds), as far as `count`. */
  readonly attributes: readonly LabelSet[];
  /** Each series' value, as far as `count`. */
  readonly values: readonly number[];
  readonly count: number;
  /** Every series' point's start (none: OTLP's zero) and end (the scrape's time). */
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  /** The stale markers that follow the series' points (staleness.ts). */
  readonly stale: readonly DataPoint<number>[];
}

/** A series' point, made when a reader asks for DataPoints (ColumnMetric.dataPoints). */
interface SeriesPoint extends DataPoint<number> {
  readonly value: number;
}

export class ColumnMetric {
  readonly dataPointType: DataPointType.SUM | DataPointType.GAUGE;
  readonly aggregationTemporality = AggregationTemporality.CUMULATIVE;
  /** Present on a counter's metric only (a Sum's), as on the SDK's. */
  declare readonly isMonotonic?: true;
  // Private, so a spread of the metric (a copy of its own fields) carries only the SDK's fields.
  readonly #columns: PointColumns;
  readonly #from: number;
  readonly #to: number;
  #points: DataPoint<number>[] | undefined;

  /** The points [from, to) of `columns` (counted across the series' points, then the stale markers). */
  constructor(
    readonly descriptor: MetricDescriptor,
    counter: boolean,
    columns: PointColumns,
    from: number,
    to: number,
  ) {
    this.dataPointType = counter ? DataPointType.SUM : DataPointType.GAUGE;
    if (counter) (this as { isMonotonic?: true }).isMonotonic = true;
    this.#columns = columns;
    this.#from = from;
    this.#to = to;
  }

  /** The family's points in the scrape, all of them (a range holds some: from, to). */
  get columns(): PointColumns {
    return this.#columns;
  }

  /** The first of the columns' points the metric holds. */
  get from(): number {
    return this.#from;
  }

  /** Past the last of the columns' points the metric holds. */
  get to(): number {
    return this.#to;
  }

  /** How many points the metric holds. */
  get pointCount(): number {
    return this.#to - this.#from;
  }

  /** The point at `at` (from ≤ at < to) as a DataPoint. */
  pointAt(at: number): DataPoint<number> {
    const { attributes, values, count, startTime, endTime, stale } = this.#columns;
    if (at >= count) return stale[at - count] as DataPoint<number>;
    return { attributes: attributes[at] as LabelSet, startTime, endTime, value: values[at] as number } satisfies SeriesPoint;
  }

  /** The points as the SDK's DataPoints: made the first time they are read. */
  get dataPoints(): DataPoint<number>[] {
    if (this.#points === undefined) {
      const points: DataPoint<number>[] = [];
      for (let at = this.#from; at < this.#to; at++) points.push(this.pointAt(at));
      this.#points = points;
    }
    return this.#points;
  }

  /** The metric holding only its points [start, end) (counted from its first). */
  range(start: number, end: number): ColumnMetric {
    return new ColumnMetric(this.descriptor, this.isMonotonic === true, this.#columns, this.#from + start, this.#from + end);
  }
}

/** The metric's points as columns, where it is a scrape's; undefined for one whose DataPoints are its own. */
export function columnMetricOf(metric: MetricData): ColumnMetric | undefined {
  return metric instanceof ColumnMetric ? metric : undefined;
}

/** How many points the metric holds, without making its DataPoints. */
export function pointCountOf(metric: MetricData): number {
  return metric instanceof ColumnMetric ? metric.pointCount : metric.dataPoints.length;
}
