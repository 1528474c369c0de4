/**
 * The legacy core/v1 event recorder's client-side correlation, which both KAI-Scheduler and the
 * kubelet use (kubernetes/client-go @v0.35.4 (d43aed2a) tools/record/events_cache.go; the
 * constants are named below):
 * - aggregation: more than 10 events differing only in message for the same source, object,
 *   type and reason within 600 s are collapsed into one "(combined from similar events): "
 *   event (defaultAggregateMaxEvents, defaultAggregateIntervalInSeconds);
 * - deduplication: an identical event bumps `count` and `lastTimestamp` of the existing
 *   object (a PATCH) instead of creating a new one;
 * - spam filter: a token bucket per source and object, burst 25, refilling one event per 300 s
 *   (defaultSpamBurst, defaultSpamQPS); what it rejects is not written at all.
 * Order as EventCorrelate applies it: aggregate, observe (count), then filter.
 */
import { unitHash } from "../noise.js";

export interface EventSource {
  readonly component: string;
  /** Node name for kubelet events; empty for controllers. */
  readonly host: string;
}

export interface InvolvedObject {
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly fieldPath: string;
}

export interface EventInput {
  readonly source: EventSource;
  readonly object: InvolvedObject;
  readonly type: "Normal" | "Warning";
  readonly reason: string;
  readonly message: string;
}

/** One write to the API server: a new Event object or a patch of an existing one. */
export interface EventWrite extends EventInput {
  /** The Event object's name: <object name>.<hex of the first occurrence's unix nanoseconds>. */
  readonly name: string;
  readonly count: number;
  /** Unix ms of the first occurrence (the object's creationTimestamp). */
  readonly firstMs: number;
  readonly lastMs: number;
  readonly patch: boolean;
}

export const AGGREGATE_MAX_EVENTS = 10;
export const AGGREGATE_INTERVAL_MS = 600_000;
export const SPAM_BURST = 25;
export const SPAM_REFILL_MS = 300_000;
export const COMBINED_PREFIX = "(combined from similar events): ";

interface Observed {
  name: string;
  count: number;
  firstMs: number;
}

/** The aggregator's record of similar events (events_cache.go aggregateRecord): the messages seen and when last. */
interface Aggregate {
  readonly messages: Set<string>;
  lastMs: number;
}

/**
 * The cache's entries for one type and reason of a source's events about an object: the
 * aggregator's record, and the events observed (getEventKey: the message included, or the
 * aggregated event's, keyed without it).
 */
interface ReasonCache {
  /** The aggregator's key (source, object, type, reason): with a message, an event's key; it names the event's object. */
  readonly key: string;
  aggregate: Aggregate | undefined;
  readonly observed: Map<string, Observed>;
  /** The aggregated event's ("(combined from similar events): …"). */
  combined: Observed | undefined;
}

/** The cache's entries for one source and involved object: its spam filter's token bucket and its events by type and reason. */
interface SourceCache {
  readonly source: EventSource;
  readonly object: InvolvedObject;
  /** The spam filter's key (getSpamKey), made once: the aggregator's keys extend it. */
  readonly spamKey: string;
  bucket: { credit: number; atMs: number } | undefined;
  readonly normal: Map<string, ReasonCache>;
  readonly warning: Map<string, ReasonCache>;
}

export class EventRecorder {
  /**
   * Everything cached, by the involved object's UID first and then by source: each recording looks
   * its entries up by the strings it carries instead of joining them into keys, and an object that
   * goes takes all of its entries with it.
   */
  private readonly objects = new Map<string, SourceCache[]>();

  /**
   * Records an event at `nowMs`; returns the write it causes, or undefined if the spam filter
   * drops it. `observations` > 1 folds in identical recordings the filter would have dropped
   * since the last one (they still raise the cached count, as eventObserve runs first).
   */
  record(input: EventInput, nowMs: number, observations = 1): EventWrite | undefined {
    const source = this.sourceCache(input);
    const reason = reasonCache(source, input);
    // Aggregated events share one object keyed without the message (its message is the latest).
    let aggregate = reason.aggregate;
    if (aggregate === undefined || nowMs - aggregate.lastMs > AGGREGATE_INTERVAL_MS) {
      aggregate = { messages: new Set(), lastMs: nowMs };
      reason.aggregate = aggregate;
    }
    aggregate.messages.add(input.message);
    aggregate.lastMs = nowMs;
    const combined = aggregate.messages.size > AGGREGATE_MAX_EVENTS;
    const event = combined ? { ...input, message: `${COMBINED_PREFIX}${input.message}` } : input;
    const known = combined ? reason.combined : reason.observed.get(input.message);
    let observed: Observed;
    if (known === undefined) {
      const key = combined ? reason.key : `${reason.key}\u0000${input.message}`;
      observed = { name: eventName(event.object.name, nowMs, key), count: 1, firstMs: nowMs };
      if (combined) reason.combined = observed;
      else reason.observed.set(input.message, observed);
    } else {
      observed = known;
      observed.count += observations;
    }
    if (!allow(source, nowMs)) return undefined;
    // Written out, not spread: a platform's day records hundreds of thousands of events.
    return {
      source: event.source,
      object: event.object,
      type: event.type,
      reason: event.reason,
      message: event.message,
      name: observed.name,
      count: observed.count,
      firstMs: observed.firstMs,
      lastMs: nowMs,
      patch: known !== undefined,
    };
  }

  /** When the spam filter will next let an event about this source and object through. */
  nextAllowedMs(input: EventInput, nowMs: number): number {
    const bucket = bucketAt(this.sourceCache(input), nowMs);
    return bucket.credit >= SPAM_REFILL_MS ? nowMs : nowMs + (SPAM_REFILL_MS - bucket.credit);
  }

  /** Forgets everything about an object that is gone (its events expire with it). */
  forget(objectUid: string): void {
    this.objects.delete(objectUid);
  }

  /** The entries of the event's source and object, made the first time they meet. */
  private sourceCache(e: EventInput): SourceCache {
    const o = e.object;
    let caches = this.objects.get(o.uid);
    if (caches === undefined) {
      caches = [];
      this.objects.set(o.uid, caches);
    }
    // An object's events come from a source or two (the scheduler, the kubelet of its node).
    for (const cache of caches) if (sameSource(cache, e)) return cache;
    const cache: SourceCache = {
      source: e.source,
      object: o,
      spamKey: `${e.source.component}\u0000${e.source.host}\u0000${o.kind}\u0000${o.namespace}\u0000${o.name}\u0000${o.uid}\u0000${o.apiVersion}`,
      bucket: undefined,
      normal: new Map(),
      warning: new Map(),
    };
    caches.push(cache);
    return cache;
  }
}

/** Whether `cache` is the entry of the event's source and object (getSpamKey's fields; the UID found it). */
function sameSource(cache: SourceCache, e: EventInput): boolean {
  const { source, object } = cache;
  return (
    source.component === e.source.component &&
    source.host === e.source.host &&
    object.kind === e.object.kind &&
    object.namespace === e.object.namespace &&
    object.name === e.object.name &&
    object.apiVersion === e.object.apiVersion
  );
}

/** The entries of the event's type and reason among its source's. */
function reasonCache(source: SourceCache, e: EventInput): ReasonCache {
  const byReason = e.type === "Normal" ? source.normal : source.warning;
  let cache = byReason.get(e.reason);
  if (cache === undefined) {
    cache = { key: `${source.spamKey}\u0000${e.type}\u0000${e.reason}`, aggregate: undefined, observed: new Map(), combined: undefined };
    byReason.set(e.reason, cache);
  }
  return cache;
}

function allow(source: SourceCache, nowMs: number): boolean {
  const bucket = bucketAt(source, nowMs);
  if (bucket.credit < SPAM_REFILL_MS) return false;
  bucket.credit -= SPAM_REFILL_MS;
  return true;
}

/** The source's token bucket, refilled to `nowMs`. */
function bucketAt(source: SourceCache, nowMs: number): { credit: number; atMs: number } {
  let bucket = source.bucket;
  if (bucket === undefined) {
    bucket = { credit: SPAM_BURST * SPAM_REFILL_MS, atMs: nowMs };
    source.bucket = bucket;
  }
  // Records stamped ahead (an image pull's end) must not make later, earlier-stamped ones pay.
  bucket.credit = Math.min(SPAM_BURST * SPAM_REFILL_MS, bucket.credit + Math.max(0, nowMs - bucket.atMs));
  bucket.atMs = Math.max(bucket.atMs, nowMs);
  return bucket;
}

/**
 * An Event object's name as the recorder makes it (tools/record/event.go makeEvent:
 * `fmt.Sprintf("%v.%x", ref.Name, t.UnixNano())`), t the moment the event was made: the
 * simulation's millisecond plus where in it the component got to recording this one, fixed by the
 * event's cache key (a modelling choice: below a millisecond, so events of one object made in the
 * same millisecond — Scheduled, Bound, Pulling — are separate objects, and no name ends in a whole
 * second's nanoseconds).
 */
function eventName(objectName: string, nowMs: number, key: string): string {
  const withinMs = BigInt(Math.floor(unitHash(`event-made/${key}`) * 1_000_000));
  return `${objectName}.${(BigInt(nowMs) * 1_000_000n + withinMs).toString(16)}`;
}
