/**
 * Staleness as the collector's prometheus receiver reports it. The receiver scrapes through
 * Prometheus' scrape loop, which appends a stale marker (StaleNaN) for every series of a
 * target's previous scrape that the current scrape no longer has (`scrape/scrape.go`
 * `updateStaleMarkers`, Prometheus v0.314.0), and for every series of a target that left
 * discovery, stamped when its next scrape would have been (`endOfRunStaleness`). The receiver
 * turns each marker into a data point with the NoRecordedValue flag and no value
 * (`internal/metricfamily.go` `toNumberDataPoint`, collector-contrib v0.161.0); Prometheus'
 * OTLP receiver and the collector's remote-write exporter turn the flag back into a stale marker
 * (`pkg/translator/prometheusremotewrite`), so a series that ends, ends there too instead of
 * lingering for the query lookback (5 minutes).
 *
 * The SDK's DataPoint has no flags: a stale point carries NaN as its value and this module's
 * mark, which gpusynth's encoders (metrics-encoder.ts, json-metrics.ts) write as the flag.
 */

import type { HrTime } from "@opentelemetry/api";
import type { DataPoint } from "@opentelemetry/sdk-metrics";
import { labelsText } from "./exposition.js";

const NO_RECORDED_VALUE: unique symbol = Symbol("OTLP's DataPointFlags.NO_RECORDED_VALUE");

/** OTLP's `DataPointFlags.FLAG_NO_RECORDED_VALUE_MASK` (metrics.proto). */
export const FLAG_NO_RECORDED_VALUE = 1;

type StalePoint = DataPoint<number> & { readonly [NO_RECORDED_VALUE]: true };

/** Whether a point is a stale marker (its value, NaN, is not to be written). */
export function isNoRecordedValue(point: DataPoint<number>): boolean {
  // The NaN test first: an ordinary point never pays the mark's lookup.
  return Number.isNaN(point.value) && (point as Partial<StalePoint>)[NO_RECORDED_VALUE] === true;
}

function stalePoint(attributes: LabelSet, endTime: HrTime, startTime: HrTime): StalePoint {
  return { attributes, startTime, endTime, value: Number.NaN, [NO_RECORDED_VALUE]: true };
}

/**
 * A point of its own, for a sink that keeps it: the same attributes and value, its times copied, a
 * stale marker still one; only a DataPoint's fields, whatever else its object holds.
 */
export function pointCopied(point: DataPoint<number>): DataPoint<number> {
  const startTime: HrTime = [point.startTime[0], point.startTime[1]];
  const endTime: HrTime = [point.endTime[0], point.endTime[1]];
  return isNoRecordedValue(point)
    ? stalePoint(point.attributes as LabelSet, endTime, startTime)
    : { attributes: point.attributes, startTime, endTime, value: point.value };
}

const NONE_STALE: readonly StalePoint[] = Object.freeze([]);

/** How far ahead a label set is looked for when the two scrapes' series stop lining up. */
const LOOKAHEAD = 32;

/** A series' label set, as a point carries it: what staleness compares. */
type LabelSet = DataPoint<number>["attributes"];

/** The index of `labels` among series[from, from + LOOKAHEAD), within the first `count`, or -1. */
function ahead(series: readonly LabelSet[], from: number, count: number, labels: LabelSet): number {
  const to = Math.min(count, from + LOOKAHEAD);
  for (let k = from; k < to; k++) if (series[k] === labels) return k;
  return -1;
}

const textOf = (labels: LabelSet): string => labelsText(labels as Record<string, string>);

/**
 * The stale points of one family: the series of `previous` (the label sets of the last scrape's
 * points, as far as `previousCount`) that `current` (this scrape's, as far as `currentCount`) no
 * longer has, stamped `endTime`.
 *
 * Sources keep a series' label set while its subject lives and list their series in a stable
 * order, so the two scrapes are walked side by side by identity, and where they stop lining up
 * (a pod's series came or went) a short look ahead finds where they line up again. Label sets
 * left over on either side are then compared by content: a source that builds its label sets
 * anew each scrape gives other objects for the same series.
 */
export function staleOf(
  previous: readonly LabelSet[],
  previousCount: number,
  current: readonly LabelSet[],
  currentCount: number,
  endTime: HrTime,
  startTime: HrTime,
): readonly StalePoint[] {
  // Mostly every series is still there, in its place: nothing is made for the family then (a
  // platform scrape walks about 45,000 families).
  let same = 0;
  while (same < previousCount && same < currentCount && previous[same] === current[same]) same++;
  if (same === previousCount) return NONE_STALE;
  const gone: LabelSet[] = [];
  const arrived: LabelSet[] = [];
  let i = same;
  let j = same;
  while (i < previousCount && j < currentCount) {
    const before = previous[i] as LabelSet;
    const now = current[j] as LabelSet;
    if (before === now) {
      i++;
      j++;
      continue;
    }
    const inserted = ahead(current, j + 1, currentCount, before);
    if (inserted >= 0) {
      while (j < inserted) arrived.push(current[j++] as LabelSet);
      continue;
    }
    const removed = ahead(previous, i + 1, previousCount, now);
    if (removed >= 0) {
      while (i < removed) gone.push(previous[i++] as LabelSet);
      continue;
    }
    gone.push(before);
    arrived.push(now);
    i++;
    j++;
  }
  while (i < previousCount) gone.push(previous[i++] as LabelSet);
  if (gone.length === 0) return NONE_STALE;
  while (j < currentCount) arrived.push(current[j++] as LabelSet);
  // A label set seen on both sides out of line, or built anew with the same labels, is the same series.
  const still = new Set(arrived.map(textOf));
  return gone.filter((labels) => !still.has(textOf(labels))).map((labels) => stalePoint(labels, endTime, startTime));
}
