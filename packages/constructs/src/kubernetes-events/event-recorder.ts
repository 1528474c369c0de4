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

export class EventRecorder {
  private readonly aggregates = new Map<string, { messages: Set<string>; lastMs: number }>();
  private readonly observed = new Map<string, Observed>();
  /** Token buckets with the credit in milliseconds of refill (one token = SPAM_REFILL_MS), so arithmetic stays exact. */
  private readonly buckets = new Map<string, { credit: number; atMs: number }>();
  /** Cache keys per involved object UID, so an object's entries can be dropped when it goes. */
  private readonly keysByObject = new Map<string, Set<string>>();

  /**
   * Records an event at `nowMs`; returns the write it causes, or undefined if the spam filter
   * drops it. `observations` > 1 folds in identical recordings the filter would have dropped
   * since the last one (they still raise the cached count, as eventObserve runs first).
   */
  record(input: EventInput, nowMs: number, observations = 1): EventWrite | undefined {
    const keys = cacheKeys(input);
    // Aggregated events share one object keyed without the message (its message is the latest).
    const { event, key } = this.aggregate(input, keys, nowMs);
    const known = this.observed.get(key);
    let observed: Observed;
    if (known === undefined) {
      observed = { name: eventName(event.object.name, nowMs, key), count: 1, firstMs: nowMs };
      this.observed.set(key, observed);
      // Remembered with the others when first observed (forget drops all three).
      this.remember(input.object.uid, key, keys.aggregate, keys.spam);
    } else {
      observed = known;
      observed.count += observations;
    }
    if (!this.allow(keys.spam, nowMs)) return undefined;
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
    const bucket = this.bucketAt(cacheKeys(input).spam, nowMs);
    return bucket.credit >= SPAM_REFILL_MS ? nowMs : nowMs + (SPAM_REFILL_MS - bucket.credit);
  }

  /** Forgets everything about an object that is gone (its events expire with it). */
  forget(objectUid: string): void {
    for (const key of this.keysByObject.get(objectUid) ?? []) {
      this.aggregates.delete(key);
      this.observed.delete(key);
      this.buckets.delete(key);
    }
    this.keysByObject.delete(objectUid);
  }

  private remember(objectUid: string, ...keys: string[]): void {
    let set = this.keysByObject.get(objectUid);
    if (set === undefined) {
      set = new Set();
      this.keysByObject.set(objectUid, set);
    }
    for (const key of keys) set.add(key);
  }

  private aggregate(input: EventInput, keys: CacheKeys, nowMs: number): { event: EventInput; key: string } {
    const key = keys.aggregate;
    let entry = this.aggregates.get(key);
    if (entry === undefined || nowMs - entry.lastMs > AGGREGATE_INTERVAL_MS) {
      entry = { messages: new Set(), lastMs: nowMs };
      this.aggregates.set(key, entry);
    }
    entry.messages.add(input.message);
    entry.lastMs = nowMs;
    if (entry.messages.size <= AGGREGATE_MAX_EVENTS) return { event: input, key: `${key}\u0000${input.message}` };
    return { event: { ...input, message: `${COMBINED_PREFIX}${input.message}` }, key };
  }

  private allow(spamKey: string, nowMs: number): boolean {
    const bucket = this.bucketAt(spamKey, nowMs);
    if (bucket.credit < SPAM_REFILL_MS) return false;
    bucket.credit -= SPAM_REFILL_MS;
    return true;
  }

  private bucketAt(key: string, nowMs: number): { credit: number; atMs: number } {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { credit: SPAM_BURST * SPAM_REFILL_MS, atMs: nowMs };
      this.buckets.set(key, bucket);
    }
    // Records stamped ahead (an image pull's end) must not make later, earlier-stamped ones pay.
    bucket.credit = Math.min(SPAM_BURST * SPAM_REFILL_MS, bucket.credit + Math.max(0, nowMs - bucket.atMs));
    bucket.atMs = Math.max(bucket.atMs, nowMs);
    return bucket;
  }
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

/**
 * events_cache.go's keys, made once per recording (the cache looks each up): the spam filter's
 * per source and object, the aggregator's without the message, and the event's own with it
 * (`${aggregate}\u0000${message}`, made only where it is used).
 */
interface CacheKeys {
  readonly spam: string;
  readonly aggregate: string;
}

function cacheKeys(e: EventInput): CacheKeys {
  const o = e.object;
  const spam = `${e.source.component}\u0000${e.source.host}\u0000${o.kind}\u0000${o.namespace}\u0000${o.name}\u0000${o.uid}\u0000${o.apiVersion}`;
  return { spam, aggregate: `${spam}\u0000${e.type}\u0000${e.reason}` };
}
