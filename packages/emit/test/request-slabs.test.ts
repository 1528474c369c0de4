/**
 * Queued request bodies in reused memory: a body stays exactly as it was handed over while its
 * request waits, whatever is held and released around it, and the memory of done requests is
 * carved again instead of new memory being allocated.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";
import { RequestSlabs } from "../src/delivery/request-slabs.js";
import { emitOffline } from "../src/offline.js";
import type { MetricsSink } from "../src/sinks.js";
import { encodeScrape, type WireFormat } from "../src/wire.js";
import { releaseShared, SharedSlabs } from "../src/workers/shared-slabs.js";

/** `length` bytes of `fill`, as plain numbers (held bodies are Buffers, compared by content). */
const bytes = (length: number, fill: number) => new Array<number>(length).fill(fill);
const content = (body: Uint8Array) => [...body];

describe("request slabs", () => {
  it("keeps every held body intact while others are held and released around it", () => {
    const slabs = new RequestSlabs(64);
    const held = [];
    for (let i = 0; i < 40; i++) {
      held.push({ body: slabs.hold(Uint8Array.from(bytes(5 + (i % 7), i))), fill: i, length: 5 + (i % 7) });
      // Requests end out of order: every third one is done at once, the rest stay queued.
      if (i % 3 === 0) slabs.release((held.shift() as { body: Uint8Array }).body);
    }
    for (const { body, fill, length } of held) expect(content(body)).toEqual(bytes(length, fill));
  });

  it("copies what it holds: the encoder's buffer may be written again at once", () => {
    const slabs = new RequestSlabs(64);
    const transient = Uint8Array.from(bytes(10, 7));
    const body = slabs.hold(transient);
    transient.fill(0);
    expect(content(body)).toEqual(bytes(10, 7));
    expect(slabs.hold(body)).toBe(body);
  });

  it("carves the memory of done requests again instead of allocating more", () => {
    const slabs = new RequestSlabs(64);
    const first = Array.from({ length: 8 }, (_, i) => slabs.hold(Uint8Array.from(bytes(16, i))));
    const memory = new Set(first.map((b) => b.buffer));
    for (const body of first) slabs.release(body);
    const second = Array.from({ length: 8 }, (_, i) => slabs.hold(Uint8Array.from(bytes(16, 100 + i))));
    expect(new Set(second.map((b) => b.buffer))).toEqual(memory);
    expect(second.map(content)).toEqual(second.map((_, i) => bytes(16, 100 + i)));
  });

  it("ignores a second release of a body, which would otherwise free memory still in use", () => {
    const slabs = new RequestSlabs(64);
    const a = slabs.hold(Uint8Array.from(bytes(16, 1)));
    const b = slabs.hold(Uint8Array.from(bytes(16, 2)));
    slabs.release(a);
    slabs.release(a);
    slabs.hold(Uint8Array.from(bytes(32, 3)));
    slabs.hold(Uint8Array.from(bytes(16, 4)));
    expect(content(b)).toEqual(bytes(16, 2));
  });

  it("keeps a body written at the end of its room where it is, without a copy", () => {
    const slabs = new RequestSlabs(64);
    const room = slabs.room();
    room.fill(3, room.length - 10);
    const written = room.subarray(room.length - 10);
    const body = slabs.hold(written);
    expect([body.buffer, body.byteOffset]).toEqual([room.buffer, written.byteOffset]);
    // The next room ends where the body starts; once its request is done, the slab is whole again.
    expect(slabs.room().byteLength).toBe(54);
    slabs.hold(Uint8Array.from(bytes(4, 8)));
    expect(content(body)).toEqual(bytes(10, 3));
    slabs.release(body);
  });

  it("joins bodies written one after another at the ends of its rooms without a copy, and copies bodies that do not lie so", () => {
    const slabs = new RequestSlabs(64);
    const written = (length: number, fill: number) => {
      const room = slabs.room();
      room.fill(fill, room.length - length);
      return slabs.hold(room.subarray(room.length - length));
    };
    const [a, b, c] = [written(6, 1), written(4, 2), written(8, 3)];
    expect([slabs.apart(a, b), slabs.apart(b, c), slabs.apart(a, c), slabs.apart(b, a)]).toEqual([false, false, true, true]);
    const joined = slabs.holdJoined([a, b, c]);
    // The memory the three span: the last written lies first.
    expect([joined.buffer, joined.byteOffset, joined.byteLength]).toEqual([a.buffer, c.byteOffset, 18]);
    expect(content(joined)).toEqual([...bytes(8, 3), ...bytes(4, 2), ...bytes(6, 1)]);
    // Out of that order, or with another body carved between them, they are copied, in the order given.
    const copied = slabs.holdJoined([c, b, a]);
    expect(copied.byteOffset + copied.byteLength).toBeLessThanOrEqual(c.byteOffset);
    expect(content(copied)).toEqual([...bytes(8, 3), ...bytes(4, 2), ...bytes(6, 1)]);
    const [d, e, f] = [written(2, 4), written(3, 5), written(2, 6)];
    expect(slabs.apart(d, f)).toBe(true);
    const apart = slabs.holdJoined([d, f]);
    expect(content(apart)).toEqual([...bytes(2, 4), ...bytes(2, 6)]);
    // The joined body is held on its own: with everything else released, its slab is not carved
    // again (a slab that held nothing would be, from its end, where the joined body lies).
    for (const body of [a, b, c, copied, d, e, f, apart]) slabs.release(body);
    for (let i = 0; i < 16; i++) slabs.release(slabs.hold(Uint8Array.from(bytes(8, 9))));
    expect(content(joined)).toEqual([...bytes(8, 3), ...bytes(4, 2), ...bytes(6, 1)]);
  });

  it("keeps a body of a worker's shared slab there, which the worker does not carve again until its request is done", () => {
    const worker = new SharedSlabs(64);
    const [a, b] = [worker.hold(Uint8Array.from(bytes(24, 1))), worker.hold(Uint8Array.from(bytes(24, 2)))];
    const slabs = new RequestSlabs(64);
    const queued = slabs.hold(a);
    expect(queued).toBe(a);
    // The run's thread hands the scrape's bodies back once its sink took them (shard-workers.ts):
    // the queued one stays the delivery's, so its slab is not carved again.
    releaseShared([a, b]);
    worker.hold(Uint8Array.from(bytes(24, 3)));
    expect(worker.hold(Uint8Array.from(bytes(24, 4))).buffer).not.toBe(a.buffer);
    expect(content(queued)).toEqual(bytes(24, 1));
    // Its request done, the slab is the worker's again.
    slabs.release(queued);
    worker.hold(Uint8Array.from(bytes(24, 5)));
    expect(worker.hold(Uint8Array.from(bytes(24, 6))).buffer).toBe(a.buffer);
  });

  it("holds requests encoded into its room byte for byte as those encoded elsewhere, cut to size and held together", async () => {
    const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/scenarios/crash-loop.yaml", import.meta.url)));
    // Requests of at most 16 KiB in slabs of 64 KiB: large targets are cut into parts (a part
    // over the limit is encoded again into the same room), rooms run out and slabs turn over,
    // and a request that outgrows its room is copied in instead.
    const format: WireFormat = { kind: "otlp", encoding: "protobuf", maxRequestBytes: 16 * 1024 };
    const slabs = new RequestSlabs(64 * 1024);
    const held: Array<{ body: Uint8Array; expected: Buffer }> = [];
    const sink: MetricsSink = {
      export: async (metrics) => {
        const elsewhere = encodeScrape(format, metrics);
        const inRoom = encodeScrape(format, metrics, slabs);
        if (elsewhere.kind !== "otlp" || inRoom.kind !== "otlp") throw new Error("not OTLP");
        expect(inRoom.encoded.requests.map((r) => r.items)).toEqual(elsewhere.encoded.requests.map((r) => r.items));
        inRoom.encoded.requests.forEach((r, i) => {
          held.push({ body: r.body, expected: Buffer.from(elsewhere.encoded.requests[i]?.body ?? []) });
        });
        return true;
      },
      shutdown: async () => {},
    };
    await emitOffline(blueprint, sink, { durationMs: 5 * 60_000, intervalMs: 60_000 });
    expect(held.length).toBeGreaterThan(50);
    expect(held.filter(({ body }) => body.byteLength > 8 * 1024).length).toBeGreaterThan(0);
    // Every body, all still held, is intact: none was written over by a later request.
    expect(held.filter(({ body, expected }) => Buffer.compare(body, expected) !== 0)).toEqual([]);
    for (const { body } of held) slabs.release(body);
  });

  it("gives a body larger than a slab an array of its own", () => {
    const slabs = new RequestSlabs(64);
    const large = Uint8Array.from(bytes(100, 9));
    const body = slabs.hold(large);
    expect(body).not.toBe(large);
    expect(content(body)).toEqual(bytes(100, 9));
    slabs.release(body);
  });
});
