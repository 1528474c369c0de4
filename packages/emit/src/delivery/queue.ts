/**
 * A bounded retry queue between a live run and a receiver. The run only ever enqueues — it never
 * waits for the network — and the queue sends in the background:
 *
 * - at most `maxInFlight` requests at once, and never two with the same key (one scrape target's
 *   requests stay in order, so a backlog drained after an outage reaches Prometheus without
 *   out-of-order samples);
 * - a request that fails in a retryable way goes back to its place in the queue and the queue
 *   enters an outage: one probe at a time with exponential backoff (capped, so delivery resumes
 *   within about `retry.maxMs` of the receiver's return);
 * - a request the receiver rejects for good (a 4xx, INVALID_ARGUMENT) is dropped and counted;
 * - what waits is bounded in bytes (and optionally in items); past the bound the oldest
 *   requests are dropped first, and counted.
 *
 * The outage's start and end are reported once each, with what was queued, delivered and dropped
 * meanwhile. So is an overflow — the queue dropping data while the receiver answers, because it
 * takes data more slowly than the run makes it (draining a backlog, a slow link): its start, and
 * its end when the queue has caught up, with what it dropped. Every drop before `close` belongs to
 * exactly one outage or overflow report.
 */

/** How one attempt ended. */
export type Outcome =
  | { readonly kind: "delivered" }
  | { readonly kind: "retry"; readonly error: Error }
  | { readonly kind: "rejected"; readonly error: Error };

export interface QueuedRequest {
  /** Encoded size: what the queue's byte bound counts. */
  readonly bytes: number;
  /** Data points or log records in the request. */
  readonly items: number;
  /**
   * Requests that share a key are sent one at a time, in order; a request of several targets'
   * data holds each one's key.
   */
  readonly key?: string | readonly string[];
}

export interface Tally {
  readonly requests: number;
  readonly items: number;
  readonly bytes: number;
}

export interface DeliveryStats {
  readonly enqueued: Tally;
  readonly delivered: Tally;
  /** Dropped because the queue was full (oldest first). */
  readonly dropped: Tally;
  /** Refused by the receiver for good; not retried. */
  readonly rejected: Tally;
  /** Waiting now, in flight included. */
  readonly pending: Tally;
  /** When the current outage began (Unix ms); absent while the receiver answers. */
  readonly outageSinceMs?: number;
}

export interface OutageReport {
  readonly error: Error;
  readonly sinceMs: number;
  readonly durationMs: number;
  /** Counted from the outage's start to its end. */
  readonly enqueued: Tally;
  readonly delivered: Tally;
  readonly dropped: Tally;
}

export interface OverflowReport {
  readonly sinceMs: number;
  readonly durationMs: number;
  /** Dropped from the overflow's start to its end. */
  readonly dropped: Tally;
}

export interface DeliveryEvents {
  onOutageStart?(error: Error, stats: DeliveryStats): void;
  onOutageEnd?(report: OutageReport): void;
  onOverflowStart?(stats: DeliveryStats): void;
  onOverflowEnd?(report: OverflowReport): void;
  onRejected?(error: Error, request: QueuedRequest): void;
}

export interface DeliveryQueueOptions<R extends QueuedRequest> {
  readonly maxQueuedBytes: number;
  /** Bound on queued items as well (OTEL_BLRP_MAX_QUEUE_SIZE for logs); none when absent. */
  readonly maxQueuedItems?: number;
  readonly maxInFlight: number;
  /** One attempt; `probe` is true while the receiver is considered down. */
  readonly send: (request: R, attempt: { readonly probe: boolean }) => Promise<Outcome>;
  /** Backoff between probes during an outage: doubles from initialMs up to maxMs. */
  readonly retry?: { readonly initialMs: number; readonly maxMs: number };
  readonly events?: DeliveryEvents;
  readonly now?: () => number;
  /** Called once for each request the queue is done with: delivered, refused or dropped (not when still queued at close). */
  readonly done?: (request: R) => void;
}

interface Entry<R> {
  readonly seq: number;
  readonly request: R;
}

class MutableTally implements Tally {
  requests = 0;
  items = 0;
  bytes = 0;
  add(request: QueuedRequest, sign = 1): void {
    this.requests += sign;
    this.items += sign * request.items;
    this.bytes += sign * request.bytes;
  }
  snapshot(): Tally {
    return { requests: this.requests, items: this.items, bytes: this.bytes };
  }
}

const minus = (a: Tally, b: Tally): Tally => ({ requests: a.requests - b.requests, items: a.items - b.items, bytes: a.bytes - b.bytes });

/** Calls `each` with each of the request's keys. */
export function forEachKey(request: QueuedRequest, each: (key: string) => void): void {
  const key = request.key;
  if (typeof key === "string") each(key);
  else if (key !== undefined) for (const k of key) each(k);
}

/** Entries scanned for one whose key is not in flight before the pump waits for a completion. */
const MAX_SCAN = 256;

export class DeliveryQueue<R extends QueuedRequest> {
  private readonly queue: Entry<R>[] = [];
  private readonly inFlightKeys = new Set<string>();
  private readonly inFlight = new MutableTally();
  private readonly queued = new MutableTally();
  private readonly enqueued = new MutableTally();
  private readonly delivered = new MutableTally();
  private readonly dropped = new MutableTally();
  private readonly rejected = new MutableTally();
  private seq = 0;
  private outage: { error: Error; sinceMs: number; enqueued: Tally; delivered: Tally; dropped: Tally } | undefined;
  /** Dropping while the receiver answers; ends when the queue has emptied. */
  private overflow: { sinceMs: number; dropped: Tally } | undefined;
  private probing = false;
  private probeTimer: NodeJS.Timeout | undefined;
  private backoffMs: number;
  private closed = false;
  /**
   * Past close's deadline: nothing more is sent. A request still in flight then may fail after
   * it; were it retried, a run whose receiver is down would never end.
   */
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  /** Woken whenever a request settles: room() waits on them. */
  private settleWaiters: Array<() => void> = [];
  private readonly retry: { readonly initialMs: number; readonly maxMs: number };
  private readonly now: () => number;

  constructor(private readonly options: DeliveryQueueOptions<R>) {
    this.retry = options.retry ?? { initialMs: 250, maxMs: 1000 };
    this.backoffMs = this.retry.initialMs;
    this.now = options.now ?? Date.now;
  }

  /** Queues a request and returns at once; the oldest requests make room when the queue is full. */
  enqueue(request: R): void {
    this.enqueued.add(request);
    if (this.closed) {
      this.dropped.add(request);
      this.options.done?.(request);
      return;
    }
    this.insert({ seq: this.seq++, request });
    this.pump();
  }

  /** Counts items refused before they could be queued (too large to send at all). */
  reject(items: number, error: Error): void {
    const request = { bytes: 0, items };
    this.enqueued.add(request);
    this.rejected.add(request);
    this.options.events?.onRejected?.(error, request);
  }

  stats(): DeliveryStats {
    const pending = {
      requests: this.queued.requests + this.inFlight.requests,
      items: this.queued.items + this.inFlight.items,
      bytes: this.queued.bytes + this.inFlight.bytes,
    };
    return {
      enqueued: this.enqueued.snapshot(),
      delivered: this.delivered.snapshot(),
      dropped: this.dropped.snapshot(),
      rejected: this.rejected.snapshot(),
      pending,
      ...(this.outage === undefined ? {} : { outageSinceMs: this.outage.sinceMs }),
    };
  }

  /** True while the receiver is considered down. */
  get inOutage(): boolean {
    return this.outage !== undefined;
  }

  /** Resolves when nothing is queued or in flight, or at `deadlineMs` (Unix ms); true when idle. */
  async idle(deadlineMs: number): Promise<boolean> {
    if (!this.isIdle()) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadlineMs - this.now()));
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.isIdle();
  }

  /**
   * Resolves once at most `bytes` are queued or in flight, while the receiver is down (a run that
   * waits goes on, and the bound applies), or at `deadlineMs` (Unix ms): a producer that may wait
   * (an offline run) lets the receiver set the pace instead of filling the queue.
   */
  async room(bytes: number, deadlineMs: number): Promise<void> {
    while (this.queued.bytes + this.inFlight.bytes > bytes && this.outage === undefined && this.now() < deadlineMs) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadlineMs - this.now()));
        this.settleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /**
   * Stops accepting requests and keeps sending until everything is delivered or `deadlineMs`
   * (Unix ms) passes; what is still pending then is reported, not waited for, and not sent again.
   */
  async close(deadlineMs: number): Promise<DeliveryStats> {
    this.closed = true;
    await this.idle(deadlineMs);
    this.stopped = true;
    clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    this.endOverflow();
    return this.stats();
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.inFlight.requests === 0;
  }

  /** Inserts in sequence order (a retried request goes back to its place) and enforces the bound. */
  private insert(entry: Entry<R>): void {
    let index = this.queue.length;
    while (index > 0 && (this.queue[index - 1] as Entry<R>).seq > entry.seq) index--;
    this.queue.splice(index, 0, entry);
    this.queued.add(entry.request);
    const maxItems = this.options.maxQueuedItems ?? Number.POSITIVE_INFINITY;
    const before = this.dropped.snapshot();
    while (this.queue.length > 0 && (this.queued.bytes > this.options.maxQueuedBytes || this.queued.items > maxItems)) {
      const oldest = this.queue.shift() as Entry<R>;
      this.queued.add(oldest.request, -1);
      this.dropped.add(oldest.request);
      this.options.done?.(oldest.request);
    }
    if (this.dropped.requests > before.requests && this.outage === undefined && this.overflow === undefined) {
      this.overflow = { sinceMs: this.now(), dropped: before };
      this.options.events?.onOverflowStart?.(this.stats());
    }
  }

  private pump(): void {
    if (this.stopped) return;
    if (this.outage !== undefined) {
      this.scheduleProbe();
      return;
    }
    while (this.inFlight.requests < this.options.maxInFlight) {
      const index = this.nextIndex();
      if (index < 0) break;
      this.start(index, false);
    }
  }

  /**
   * The oldest queued request none of whose keys has a request in flight or an older one waiting,
   * or -1: a request that holds several keys waits for each, and a younger one sharing any of
   * them waits behind it.
   */
  private nextIndex(): number {
    const scan = Math.min(this.queue.length, MAX_SCAN);
    let waiting: Set<string> | undefined;
    const free = (key: string) => !this.inFlightKeys.has(key) && waiting?.has(key) !== true;
    for (let i = 0; i < scan; i++) {
      const key = (this.queue[i] as Entry<R>).request.key;
      if (key === undefined) return i;
      if (typeof key === "string" ? free(key) : key.every(free)) return i;
      waiting ??= new Set();
      if (typeof key === "string") waiting.add(key);
      else for (const k of key) waiting.add(k);
    }
    return -1;
  }

  private start(index: number, probe: boolean): void {
    const [entry] = this.queue.splice(index, 1) as [Entry<R>];
    const { request } = entry;
    this.queued.add(request, -1);
    this.inFlight.add(request);
    forEachKey(request, (key) => this.inFlightKeys.add(key));
    if (probe) this.probing = true;
    this.options.send(request, { probe }).then(
      (outcome) => this.settle(entry, outcome, probe),
      (error: unknown) => this.settle(entry, { kind: "retry", error: error instanceof Error ? error : new Error(String(error)) }, probe),
    );
  }

  private settle(entry: Entry<R>, outcome: Outcome, probe: boolean): void {
    const { request } = entry;
    this.inFlight.add(request, -1);
    forEachKey(request, (key) => this.inFlightKeys.delete(key));
    if (probe) this.probing = false;
    switch (outcome.kind) {
      case "delivered":
        this.delivered.add(request);
        this.options.done?.(request);
        if (this.outage !== undefined) this.endOutage();
        break;
      case "rejected":
        this.rejected.add(request);
        this.options.done?.(request);
        this.options.events?.onRejected?.(outcome.error, request);
        break;
      case "retry":
        this.insert(entry);
        if (this.outage === undefined) this.startOutage(outcome.error);
        else if (probe) this.backoffMs = Math.min(this.backoffMs * 2, this.retry.maxMs);
        break;
    }
    this.pump();
    if (this.queue.length === 0) this.endOverflow();
    this.notifyIdleIfDone();
    const waiters = this.settleWaiters;
    this.settleWaiters = [];
    for (const wake of waiters) wake();
  }

  private notifyIdleIfDone(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  private startOutage(error: Error): void {
    this.endOverflow();
    this.outage = {
      error,
      sinceMs: this.now(),
      enqueued: this.enqueued.snapshot(),
      delivered: this.delivered.snapshot(),
      dropped: this.dropped.snapshot(),
    };
    this.backoffMs = this.retry.initialMs;
    this.options.events?.onOutageStart?.(error, this.stats());
  }

  private endOutage(): void {
    const outage = this.outage;
    if (outage === undefined) return;
    this.outage = undefined;
    clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    this.backoffMs = this.retry.initialMs;
    this.options.events?.onOutageEnd?.({
      error: outage.error,
      sinceMs: outage.sinceMs,
      durationMs: this.now() - outage.sinceMs,
      enqueued: minus(this.enqueued.snapshot(), outage.enqueued),
      delivered: minus(this.delivered.snapshot(), outage.delivered),
      dropped: minus(this.dropped.snapshot(), outage.dropped),
    });
  }

  private endOverflow(): void {
    const overflow = this.overflow;
    if (overflow === undefined) return;
    this.overflow = undefined;
    this.options.events?.onOverflowEnd?.({
      sinceMs: overflow.sinceMs,
      durationMs: this.now() - overflow.sinceMs,
      dropped: minus(this.dropped.snapshot(), overflow.dropped),
    });
  }

  /**
   * During an outage: one probe at a time, `backoffMs` after the last one ended. Requests sent
   * before the outage may still be waiting for their deadline; probes do not wait for them.
   */
  private scheduleProbe(): void {
    if (this.probing || this.probeTimer !== undefined || this.queue.length === 0) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      if (this.outage === undefined) return this.pump();
      const index = this.nextIndex();
      if (index >= 0 && !this.probing) this.start(index, true);
    }, this.backoffMs);
  }
}
