/**
 * The request bodies worker threads encode live in shared memory that the run's thread reads in
 * place and hands back once its sink has stored them: a body is never carved again while the run's
 * thread may read it, memory is reused once it is released, and what a sink receives from worker
 * threads is byte for byte what one thread encodes.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { emitOffline } from "../src/offline.js";
import type { EncodedMetricsSink } from "../src/sinks.js";
import { type EncodedScrape, encodeScrape, type WireFormat } from "../src/wire.js";
import { releaseShared, SharedSlabs } from "../src/workers/shared-slabs.js";

const bytes = (fill: number, length: number) => new Uint8Array(length).fill(fill);

describe("shared slabs", () => {
  it("carve a slab again only once every body carved from it is released", () => {
    // Slabs of 64 bytes: 8 of header, room for two bodies of 24.
    const slabs = new SharedSlabs(64);
    const [a, b, c] = [slabs.hold(bytes(1, 24)), slabs.hold(bytes(2, 24)), slabs.hold(bytes(3, 24))];
    expect([a.buffer === b.buffer, b.buffer === c.buffer]).toEqual([true, false]);
    expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
    // One of the first slab's bodies released: it stays held, so the next body takes new memory.
    releaseShared([a]);
    const d = slabs.hold(bytes(4, 24));
    const e = slabs.hold(bytes(5, 24));
    expect([e.buffer === a.buffer, e.buffer === c.buffer]).toEqual([false, false]);
    expect([...b]).toEqual(new Array(24).fill(2));
    // Both released: once the slab being carved is full, the first is carved again, from its
    // end, and what is still held elsewhere is intact.
    releaseShared([b]);
    const f = slabs.hold(bytes(6, 24));
    expect(f.buffer).toBe(e.buffer);
    const g = slabs.hold(bytes(8, 24));
    expect(g.buffer).toBe(a.buffer);
    expect(g.byteOffset).toBe(40);
    expect([...c, ...d].every((v, i) => v === (i < 24 ? 3 : 4))).toBe(true);
    // A body larger than a slab has an array of its own, which a worker moves instead of sharing.
    expect(slabs.hold(bytes(7, 100)).buffer).toBeInstanceOf(ArrayBuffer);
  });

  it("keep a body written at the end of their room where it is, and copy in one written elsewhere", () => {
    const slabs = new SharedSlabs(64);
    const room = slabs.room();
    expect(room.buffer).toBeInstanceOf(SharedArrayBuffer);
    // The encoder writes back to front, ending at the room's end.
    room.fill(5, room.length - 20);
    const written = room.subarray(room.length - 20);
    const kept = slabs.hold(written);
    expect([kept.buffer, kept.byteOffset, kept.byteLength]).toEqual([room.buffer, written.byteOffset, 20]);
    // The next room ends where that body starts: writing into it leaves the body intact.
    const next = slabs.room();
    expect(next.byteOffset + next.byteLength).toBe(kept.byteOffset);
    next.fill(6);
    expect([...kept]).toEqual(new Array(20).fill(5));
    // Bytes written anywhere else (a request that outgrew the room) are copied in below it.
    const copied = slabs.hold(bytes(7, 12));
    expect([copied.buffer, copied.byteOffset + copied.byteLength]).toEqual([room.buffer, kept.byteOffset]);
    expect([...copied, ...kept]).toEqual([...new Array(12).fill(7), ...new Array(20).fill(5)]);
  });

  it("give a sink, through worker threads, the OTLP requests one thread encodes, byte for byte", async () => {
    const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/scenarios/crash-loop.yaml", import.meta.url)));
    /** Every request body the sink is given, as it reads them when given them (base64). */
    const received = async (workers?: number) => {
      const bodies: string[] = [];
      const wireFormat: WireFormat = { kind: "otlp", encoding: "protobuf", maxRequestBytes: 4 * 2 ** 20 };
      const accept = (scrape: EncodedScrape) => {
        if (scrape.kind === "otlp") for (const r of scrape.encoded.requests) bodies.push(Buffer.from(r.body).toString("base64"));
      };
      const sink: EncodedMetricsSink = {
        wireFormat,
        accept,
        export: async (metrics: ResourceMetrics) => {
          accept(encodeScrape(wireFormat, metrics));
          return true;
        },
        shutdown: async () => {},
      };
      await emitOffline(blueprint, sink, { durationMs: 10 * 60_000, intervalMs: 60_000, ...(workers === undefined ? {} : { workers }) });
      return bodies;
    };
    const [one, two] = [await received(), await received(2)];
    // Ten scrapes of several targets each: every worker carves its slabs again at every tick.
    expect(one.length).toBeGreaterThan(40);
    // Workers hand over their targets in their own order: the same requests, perhaps not in one order.
    expect([...two].sort()).toEqual([...one].sort());
  });
});
