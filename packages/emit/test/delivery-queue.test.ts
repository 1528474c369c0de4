/**
 * The retry queue's promises, on a scripted receiver: order per key, bounded bytes with the
 * oldest dropped first and counted, refusals not retried, one report per outage, and a close
 * that waits no longer than its deadline.
 */
import { DeliveryQueue, type OutageReport, type Outcome, type OverflowReport } from "@gpusynth/emit";
import { describe, expect, it } from "vitest";

interface Req {
  readonly bytes: number;
  readonly items: number;
  readonly key?: string | readonly string[];
  readonly id: number;
}

const req = (id: number, key?: string | readonly string[], bytes = 100): Req => ({
  id,
  bytes,
  items: 10,
  ...(key === undefined ? {} : { key }),
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fast = { initialMs: 5, maxMs: 20 };

/** A receiver the test steers: up or down, answering after `latencyMs`, logging what arrives. */
function scriptedReceiver(latencyMs = 5) {
  const state = { up: true, refuse: new Set<number>() };
  const arrived: number[] = [];
  const starts: Array<{ id: number; at: number }> = [];
  const ends: Array<{ id: number; at: number }> = [];
  const send = async (r: Req): Promise<Outcome> => {
    starts.push({ id: r.id, at: performance.now() });
    await sleep(latencyMs);
    ends.push({ id: r.id, at: performance.now() });
    if (!state.up) return { kind: "retry", error: new Error("UNAVAILABLE") };
    if (state.refuse.has(r.id)) return { kind: "rejected", error: new Error("INVALID_ARGUMENT") };
    arrived.push(r.id);
    return { kind: "delivered" };
  };
  return { state, arrived, starts, ends, send };
}

async function drained(queue: DeliveryQueue<Req>): Promise<void> {
  while (queue.stats().pending.requests > 0) await sleep(5);
}

describe("DeliveryQueue", () => {
  it("lets a producer that may wait (an offline run) wait for room, but never while the receiver is down", async () => {
    const receiver = scriptedReceiver(10);
    const queue = new DeliveryQueue<Req>({ maxQueuedBytes: 300, maxInFlight: 1, send: receiver.send, retry: fast });
    // Six requests of 100 bytes through a 300-byte queue: each waits until the one it follows fits.
    for (let i = 0; i < 6; i++) {
      await queue.room(300 - 100, Date.now() + 5_000);
      queue.enqueue(req(i));
    }
    await drained(queue);
    expect(receiver.arrived).toEqual([0, 1, 2, 3, 4, 5]);
    expect(queue.stats().dropped.requests).toBe(0);
    // Down: room() returns at once, and the bound applies.
    receiver.state.up = false;
    queue.enqueue(req(6));
    await sleep(30);
    const started = Date.now();
    for (let i = 7; i < 12; i++) {
      await queue.room(300 - 100, Date.now() + 5_000);
      queue.enqueue(req(i));
    }
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(queue.stats().dropped.requests).toBeGreaterThan(0);
  });

  it("keeps one key's requests in order while other keys go in parallel", async () => {
    const receiver = scriptedReceiver(10);
    const queue = new DeliveryQueue<Req>({ maxQueuedBytes: 1e6, maxInFlight: 4, send: receiver.send, retry: fast });
    for (let i = 0; i < 6; i++) queue.enqueue(req(i, i % 2 === 0 ? "a" : "b"));
    await drained(queue);
    expect(receiver.arrived.filter((id) => id % 2 === 0)).toEqual([0, 2, 4]);
    expect(receiver.arrived.filter((id) => id % 2 === 1)).toEqual([1, 3, 5]);
    // Never two of one key at once: each starts after the previous one of its key ended.
    for (const key of [0, 1]) {
      const mine = receiver.starts.filter((s) => s.id % 2 === key);
      for (let i = 1; i < mine.length; i++) {
        const previousEnd = receiver.ends.find((e) => e.id === (mine[i - 1] as { id: number }).id)?.at ?? 0;
        expect((mine[i] as { at: number }).at).toBeGreaterThanOrEqual(previousEnd);
      }
    }
    // Keys a and b overlapped: 6 requests of 10 ms took well under 60 ms of sends in series.
    expect(receiver.starts[1]?.at ?? 0).toBeLessThan(receiver.ends[0]?.at ?? 0);
  });

  it("sends a request of several keys after each one's older requests, and a younger one sharing a key after it", async () => {
    // A delivery gathers several targets' data into one request that holds each one's key.
    const receiver = scriptedReceiver(30);
    const queue = new DeliveryQueue<Req>({ maxQueuedBytes: 1e6, maxInFlight: 4, send: receiver.send, retry: fast });
    queue.enqueue(req(0, "a"));
    queue.enqueue(req(1, ["a", "b"]));
    queue.enqueue(req(2, "b")); // b has nothing in flight, but 1 holds it and is older
    queue.enqueue(req(3, "c"));
    await drained(queue);
    const start = (id: number) => receiver.starts.find((s) => s.id === id)?.at ?? Number.NaN;
    const end = (id: number) => receiver.ends.find((e) => e.id === id)?.at ?? Number.NaN;
    expect(start(1)).toBeGreaterThanOrEqual(end(0));
    expect(start(2)).toBeGreaterThanOrEqual(end(1));
    // c shares nothing: it went with the first.
    expect(start(3)).toBeLessThan(end(0));
  });

  it("holds what it can through an outage, drops the oldest past its bound, and reports both once", async () => {
    const receiver = scriptedReceiver();
    const outages: Error[] = [];
    const reports: OutageReport[] = [];
    const queue = new DeliveryQueue<Req>({
      maxQueuedBytes: 350,
      maxInFlight: 1,
      send: receiver.send,
      retry: fast,
      events: { onOutageStart: (error) => outages.push(error), onOutageEnd: (report) => reports.push(report) },
    });
    receiver.state.up = false;
    for (let i = 0; i < 8; i++) {
      queue.enqueue(req(i));
      await sleep(2);
    }
    await sleep(30);
    expect(outages).toHaveLength(1);
    expect(queue.stats().outageSinceMs).toBeDefined();
    receiver.state.up = true;
    await drained(queue);
    expect(reports).toHaveLength(1);
    const stats = queue.stats();
    // 350 bytes hold three 100-byte requests (plus one in flight): the rest, oldest first, went.
    expect(receiver.arrived).toEqual(receiver.arrived.slice().sort((a, b) => a - b));
    expect(receiver.arrived.at(-1)).toBe(7);
    expect(stats.dropped.requests + stats.delivered.requests).toBe(8);
    expect(stats.dropped.requests).toBeGreaterThanOrEqual(4);
    expect(receiver.arrived).not.toContain(0);
    expect(reports[0]?.dropped.items).toBe(stats.dropped.items);
    // The outage ends with the first delivery; the backlog follows.
    expect(reports[0]?.delivered.requests).toBe(1);
    expect(stats.outageSinceMs).toBeUndefined();
  });

  it("reports an overflow while the receiver answers, once, with what it dropped, ending when the queue catches up", async () => {
    // A slow receiver: 20 ms an answer, one at a time, while requests arrive every 2 ms.
    const receiver = scriptedReceiver(20);
    const started: number[] = [];
    const reports: OverflowReport[] = [];
    const queue = new DeliveryQueue<Req>({
      maxQueuedBytes: 300,
      maxInFlight: 1,
      send: receiver.send,
      retry: fast,
      events: { onOverflowStart: (stats) => started.push(stats.dropped.requests), onOverflowEnd: (report) => reports.push(report) },
    });
    for (let i = 0; i < 20; i++) {
      queue.enqueue(req(i));
      await sleep(2);
    }
    await drained(queue);
    expect(started).toEqual([1]);
    expect(reports).toHaveLength(1);
    const stats = queue.stats();
    expect(stats.dropped.requests).toBeGreaterThan(0);
    expect(reports[0]?.dropped).toEqual(stats.dropped);
    expect(stats.dropped.requests + stats.delivered.requests).toBe(20);
  });

  it("is done with each request once — delivered, refused, dropped past its bound or after close — and never while it may still send it", async () => {
    const receiver = scriptedReceiver();
    receiver.state.refuse.add(9);
    const done: number[] = [];
    const doneAt = new Map<number, number>();
    const queue = new DeliveryQueue<Req>({
      maxQueuedBytes: 350,
      maxInFlight: 1,
      send: receiver.send,
      retry: fast,
      done: (r) => {
        done.push(r.id);
        doneAt.set(r.id, performance.now());
      },
    });
    receiver.state.up = false;
    for (let i = 0; i < 8; i++) {
      queue.enqueue(req(i));
      await sleep(2);
    }
    await sleep(30);
    // Retried through the outage, not done: only the requests the bound dropped are.
    const droppedInOutage = queue.stats().dropped.requests;
    expect(done).toHaveLength(droppedInOutage);
    receiver.state.up = true;
    queue.enqueue(req(9));
    await drained(queue);
    await queue.close(Date.now() + 1_000);
    queue.enqueue(req(10));
    expect(done.slice().sort((a, b) => a - b)).toEqual([...new Set(done)].sort((a, b) => a - b));
    expect(done.slice().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 9, 10]);
    const stats = queue.stats();
    expect(stats.delivered.requests + stats.dropped.requests + stats.rejected.requests).toBe(done.length);
    // A request's body may be reused once it is done: none is sent again after.
    expect(receiver.starts.filter((s) => s.at > (doneAt.get(s.id) ?? Number.POSITIVE_INFINITY))).toEqual([]);
  });

  it("does not retry what the receiver refuses, and counts it", async () => {
    const receiver = scriptedReceiver();
    receiver.state.refuse.add(1);
    const refused: number[] = [];
    const queue = new DeliveryQueue<Req>({
      maxQueuedBytes: 1e6,
      maxInFlight: 2,
      send: receiver.send,
      retry: fast,
      events: { onRejected: (_error, r) => refused.push(r.items) },
    });
    for (let i = 0; i < 3; i++) queue.enqueue(req(i));
    await drained(queue);
    expect(receiver.arrived.sort()).toEqual([0, 2]);
    expect(receiver.starts.filter((s) => s.id === 1)).toHaveLength(1);
    expect(queue.stats().rejected).toEqual({ requests: 1, items: 10, bytes: 100 });
    expect(refused).toEqual([10]);
  });

  it("stops waiting at its deadline and reports what is still pending", async () => {
    const receiver = scriptedReceiver();
    receiver.state.up = false;
    const queue = new DeliveryQueue<Req>({ maxQueuedBytes: 1e6, maxInFlight: 1, send: receiver.send, retry: fast });
    for (let i = 0; i < 3; i++) queue.enqueue(req(i));
    const started = performance.now();
    const stats = await queue.close(Date.now() + 60);
    expect(performance.now() - started).toBeLessThan(200);
    expect(stats.delivered.requests).toBe(0);
    expect(stats.pending.requests).toBe(3);
    queue.enqueue(req(9));
    expect(queue.stats().dropped.requests).toBe(1);
  });

  it("sends nothing more after its deadline, even when a request in flight then fails", async () => {
    // The receiver is down and slow to say so: the first request is still in flight at close's
    // deadline and fails after it (an offline run to a collector that is down, on a loaded machine).
    const receiver = scriptedReceiver(100);
    receiver.state.up = false;
    const queue = new DeliveryQueue<Req>({ maxQueuedBytes: 1e6, maxInFlight: 1, send: receiver.send, retry: fast });
    queue.enqueue(req(0));
    const stats = await queue.close(Date.now() + 20);
    expect(stats.pending.requests).toBe(1);
    await sleep(300);
    // It failed once, and was not probed again: a probe every few ms would have kept the run alive.
    expect(receiver.ends).toHaveLength(1);
    expect(receiver.starts).toHaveLength(1);
  });
});
