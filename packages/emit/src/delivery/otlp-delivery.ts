/**
 * OTLP push for a live run, per signal: what the pipelines hand over is encoded into requests
 * that fit the receiver (requests.ts), queued with a bound (queue.ts) and sent in the background
 * through the SDK's transports (otlp-transport.ts). `export` returns at once: a slow or absent
 * collector never holds up the simulation, the scrape server or the API.
 */
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics";
import type { LogsSink } from "../logs-pipeline.js";
import type { OtlpProtocol } from "../otlp.js";
import type { EncodedMetricsSink } from "../sinks.js";
import { type EncodedScrape, encodeOtlpParts, type WireFormat } from "../wire.js";
import { type DeliveryConfig, FLUSH_ON_EXIT_MS, MAX_IN_FLIGHT } from "./config.js";
import { OtlpTransport, type Signal } from "./otlp-transport.js";
import { type DeliveryEvents, DeliveryQueue, type DeliveryStats, forEachKey } from "./queue.js";
import { RequestSlabs } from "./request-slabs.js";
import { type Encoded, type EncodedRequest, type Encoding, encodeLogs } from "./requests.js";

export interface OtlpDeliveryOptions {
  readonly protocol: OtlpProtocol;
  /** The signal's full URL; the SDK's environment variables decide when absent. */
  readonly url: string | undefined;
  readonly config: DeliveryConfig;
  readonly events?: DeliveryEvents;
  /** Probe backoff during an outage (tests shorten it). */
  readonly retry?: { readonly initialMs: number; readonly maxMs: number };
  /**
   * An offline run, which makes data faster than any receiver takes it: each export waits, up to
   * the export timeout, until what it encoded fits within the queue's bound, so the receiver sets
   * the pace and nothing is dropped while it answers (during an outage nothing waits). A live run
   * waits only within its scrape's time (scrapeRoomMs).
   */
  readonly paced?: boolean;
  /**
   * A live run's metrics: a scrape's exports wait for room in the queue, all together at most this
   * long from the scrape's first (part of its interval), before the oldest requests are dropped. A
   * large cluster's scrape (platform.yaml's, about 100 MiB) is encoded faster than a receiver takes
   * it and is larger than the queue's default bound: without the wait, half of it was dropped every
   * interval though the receiver took an interval's data in a fraction of the interval. The next
   * scrape is never late, and a receiver that is down costs no wait.
   */
  readonly scrapeRoomMs?: number;
}

abstract class OtlpDelivery {
  protected readonly queue: DeliveryQueue<EncodedRequest>;
  protected readonly encoding: Encoding;
  private readonly transport: OtlpTransport;
  /** Where queued bodies wait: memory reused once their requests are done (request-slabs.ts). */
  protected readonly slabs = new RequestSlabs();

  constructor(
    signal: Signal,
    protected readonly options: OtlpDeliveryOptions,
  ) {
    this.encoding = options.protocol === "http/json" ? "json" : "protobuf";
    this.flushMs = options.config.timeoutMs + FLUSH_ON_EXIT_MS;
    this.transport = new OtlpTransport(signal, options.protocol, options.url, options.config.timeoutMs);
    this.queue = new DeliveryQueue<EncodedRequest>({
      maxQueuedBytes: options.config.queueBytes,
      ...(signal === "logs" && options.config.logQueueRecords !== undefined ? { maxQueuedItems: options.config.logQueueRecords } : {}),
      maxInFlight: MAX_IN_FLIGHT,
      send: (request, attempt) => this.transport.send(request, attempt),
      ...(options.retry === undefined ? {} : { retry: options.retry }),
      ...(options.events === undefined ? {} : { events: options.events }),
      done: (request) => this.slabs.release(request.body),
    });
  }

  stats(): DeliveryStats {
    return this.queue.stats();
  }

  /** For a paced delivery: waits until everything handed over so far is sent (see OtlpDeliveryOptions.paced). */
  async drain(): Promise<void> {
    this.sendGathered();
    await this.room(this.options.config.queueBytes);
  }

  /**
   * Waits until `bytes` more fit within the bytes an export waits for (the queue's bound, or a live
   * scrape's window), or `deadlineMs` (none: no wait, the queue drops the oldest beyond its bound).
   */
  protected async room(bytes: number, deadlineMs = this.roomDeadline()): Promise<void> {
    if (deadlineMs !== undefined) await this.queue.room(Math.max(0, this.roomBytes() - bytes), deadlineMs);
  }

  /** How many bytes may be queued or in flight before an export waits: the queue's bound. */
  protected roomBytes(): number {
    return this.options.config.queueBytes;
  }

  /** Until when an export may wait for room: a paced delivery's, up to the export timeout. */
  protected roomDeadline(): number | undefined {
    return this.options.paced === true ? Date.now() + this.options.config.timeoutMs : undefined;
  }

  /** Queues what was encoded, once a paced delivery has room for it. */
  protected async enqueuePaced(encoded: Encoded): Promise<void> {
    // What waits to go out with them is queued with them.
    await this.room(encoded.requests.reduce((sum, r) => sum + r.bytes, this.gatheredBytes()));
    this.enqueueAll(encoded);
  }

  /** Waits until everything handed over so far is delivered (or refused), or `deadlineMs`; true when it was. */
  flush(deadlineMs: number): Promise<boolean> {
    this.sendGathered();
    return this.queue.idle(deadlineMs);
  }

  /** Queues what waits to be sent together (OtlpMetricsDelivery's small requests); nothing here. */
  protected sendGathered(): void {}

  /** The bytes waiting to be sent together. */
  protected gatheredBytes(): number {
    return 0;
  }

  /**
   * How long `shutdown` keeps delivering. A run that reached its --duration waits up to one
   * export timeout for its last requests; a run stopped by a signal gets FLUSH_ON_EXIT_MS (see
   * `hurry`), so the process ends within 2 s whatever the receiver does.
   */
  private flushMs: number;

  /** The run was interrupted: the final flush is short. */
  hurry(): void {
    this.flushMs = Math.min(this.flushMs, FLUSH_ON_EXIT_MS);
  }

  /** Keeps delivering for the flush time, then closes the channel; stats() tells what happened. */
  async shutdown(): Promise<void> {
    // A receiver that is down now is unlikely to be back within the timeout: no long wait for it.
    if (this.queue.inOutage) this.hurry();
    this.sendGathered();
    await this.queue.close(Date.now() + this.flushMs);
    this.transport.shutdown();
  }

  protected enqueueAll({ requests, oversized }: Encoded): void {
    for (const request of requests) this.enqueueOne({ ...request, body: this.slabs.hold(request.body) });
    if (oversized > 0) {
      // Cannot be sent at any split: counted as rejected, like a receiver's refusal.
      this.queue.reject(
        oversized,
        new Error(`${oversized} item(s) each over the ${this.options.config.maxRequestBytes}-byte request limit`),
      );
    }
  }

  /** Queues one request, its body held in the slabs. */
  protected enqueueOne(request: EncodedRequest): void {
    this.queue.enqueue(request);
  }
}

/**
 * A scrape's small requests, gathered into one until the next would take it past the receiver's
 * limit: protobuf's repeated fields concatenate, so the bodies of several ExportMetricsService
 * requests one after another are one request holding all their ResourceMetrics, as a collector's
 * batching exporter sends them. A large cluster's scrape is thousands of targets of tens of KiB;
 * one request each spent a fifth of a live platform run's main thread in the transport's
 * per-request work (grpc-js, http2, the HTTP agent). The request holds every target's key, so a
 * target's data still goes out in order (queue.ts). Its body is no copy where the bodies lie back to
 * back in the slabs, as the run's own encoder leaves them: the memory they span
 * (RequestSlabs.holdJoined). A worker thread's bodies are copied together.
 */
class Gathered {
  private parts: EncodedRequest[] = [];
  private gatheredBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The bytes gathered so far. */
  get bytes(): number {
    return this.gatheredBytes;
  }

  /** Whether `request` fits beside what is gathered. */
  fits(request: EncodedRequest): boolean {
    return this.gatheredBytes + request.bytes <= this.maxBytes;
  }

  /** The request gathered last, if any. */
  get last(): EncodedRequest | undefined {
    return this.parts[this.parts.length - 1];
  }

  add(request: EncodedRequest): void {
    this.parts.push(request);
    this.gatheredBytes += request.bytes;
  }

  /** What is gathered as one request (its body in `slabs`; the parts' bodies released), or undefined when nothing is. */
  take(slabs: RequestSlabs): EncodedRequest | undefined {
    const parts = this.parts;
    this.parts = [];
    this.gatheredBytes = 0;
    if (parts.length <= 1) return parts[0];
    const body = slabs.holdJoined(parts.map((p) => p.body));
    for (const part of parts) slabs.release(part.body);
    const keys = new Set<string>();
    for (const part of parts) forEachKey(part, (key) => keys.add(key));
    return { body, bytes: body.byteLength, items: parts.reduce((n, p) => n + p.items, 0), key: [...keys] };
  }
}

export class OtlpMetricsDelivery extends OtlpDelivery implements EncodedMetricsSink {
  readonly wireFormat: Extract<WireFormat, { kind: "otlp" }>;

  /** Small protobuf requests waiting to go out together (Gathered); JSON bodies do not concatenate. */
  private readonly gathered: Gathered | undefined;

  constructor(options: OtlpDeliveryOptions) {
    super("metrics", options);
    this.wireFormat = { kind: "otlp", encoding: this.encoding, maxRequestBytes: options.config.maxRequestBytes };
    // At most a quarter of the queue's bound, so a gathered request never finds the queue too small.
    const gatheredBytes = Math.min(options.config.maxRequestBytes, Math.floor(options.config.queueBytes / 4));
    this.gathered = this.encoding === "protobuf" ? new Gathered(gatheredBytes) : undefined;
  }

  protected override gatheredBytes(): number {
    return this.gathered?.bytes ?? 0;
  }

  protected override enqueueOne(request: EncodedRequest): void {
    const gathered = this.gathered;
    if (gathered === undefined) {
      super.enqueueOne(request);
      return;
    }
    // A request whose body does not lie just below the last one's in the slabs (the slab it was
    // encoded into ran short, and the next one was taken) starts the next gathering: what is
    // gathered is then sent as the memory it spans, never copied.
    const last = gathered.last;
    if (!gathered.fits(request) || (last !== undefined && this.slabs.apart(last.body, request.body))) this.sendGathered();
    gathered.add(request);
  }

  protected override sendGathered(): void {
    const request = this.gathered?.take(this.slabs);
    if (request !== undefined) super.enqueueOne(request);
  }

  async export(metrics: ResourceMetrics): Promise<boolean> {
    // A large target's requests a part at a time, each after the wait for room: the slabs hold one
    // part of it rather than all of it.
    for (const part of encodeOtlpParts(this.wireFormat, metrics, this.slabs)) await this.enqueuePaced(part);
    return true;
  }

  /** A worker thread's encoded scrape: queued as an export's would be, after the same wait for room. */
  async accept(scrape: EncodedScrape): Promise<void> {
    await this.enqueuePaced(requestsOf(scrape));
  }

  /** The scrape is over: what it gathered goes out, and the next export starts the next scrape's time to wait for room (scrapeRoomMs). */
  async forceFlush(): Promise<void> {
    this.sendGathered();
    this.scrapeDeadlineMs = undefined;
  }

  /** Until when the current scrape's exports may wait for room (scrapeRoomMs); set by its first export. */
  private scrapeDeadlineMs: number | undefined;

  protected override roomDeadline(): number | undefined {
    const scrapeRoomMs = this.liveScrapeRoomMs();
    if (scrapeRoomMs === undefined) return super.roomDeadline();
    this.scrapeDeadlineMs ??= Date.now() + scrapeRoomMs;
    return this.scrapeDeadlineMs;
  }

  /** A live run's scrape time to wait for room (scrapeRoomMs); undefined for a paced delivery or one that never waits. */
  private liveScrapeRoomMs(): number | undefined {
    return this.options.paced === true ? undefined : this.options.scrapeRoomMs;
  }

  /**
   * A live scrape's exports wait while what the transport can have in flight at once is queued or
   * in flight (MAX_IN_FLIGHT requests of the largest size), not the queue's whole bound: encoding
   * outruns any socket, so waiting at the bound filled the queue to it every scrape (platform.yaml's
   * scrape is about 100 MiB) and the run held that much memory outside its heap for requests that
   * only waited their turn. Past its wait (scrapeRoomMs) a scrape queues up to the bound as before,
   * so a receiver that is down or slow finds the same buffer.
   */
  protected override roomBytes(): number {
    const bound = super.roomBytes();
    return this.liveScrapeRoomMs() === undefined ? bound : Math.min(bound, MAX_IN_FLIGHT * this.options.config.maxRequestBytes);
  }
}

function requestsOf(scrape: EncodedScrape): Encoded {
  if (scrape.kind !== "otlp") throw new Error(`OtlpMetricsDelivery: expected OTLP requests, got ${scrape.kind}`);
  return scrape.encoded;
}

export class OtlpLogsDelivery extends OtlpDelivery implements LogsSink {
  constructor(options: OtlpDeliveryOptions) {
    super("logs", options);
  }

  async export(records: ReadableLogRecord[]): Promise<boolean> {
    const { logBatchRecords, maxRequestBytes } = this.options.config;
    await this.enqueuePaced(encodeLogs(records, this.encoding, logBatchRecords, maxRequestBytes));
    return true;
  }
}
