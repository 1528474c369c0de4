/**
 * Where queued request bodies live: slabs of memory reused from one scrape to the next.
 *
 * A request waits in the delivery queue for seconds, longer than V8's young generation keeps
 * anything, so a body allocated per request is promoted to the old generation with its memory
 * outside the heap. The tens of MiB that a large cluster queues every interval then start a
 * collection of the whole heap several times an interval. Copied into a slab instead, a body is
 * carved from memory that was allocated once and is reused once its request is done (delivered,
 * refused or dropped), so a scrape allocates nothing that outlives it. On a live platform run this
 * took the process from about 14 % of a core to about 11 % (bench/results/live-platform.md).
 *
 * Bodies are carved one after another, from a slab's end towards its start, so a slab comes back
 * when every request carved from it is done. The protobuf encoder writes a request back to front
 * into the slab's free part (`room`), so most bodies are already where they are to stay and are
 * not copied at all, and a request gathered from a scrape's bodies that lie back to back is the
 * memory they span (holdJoined). A body a worker thread encoded into its shared slabs
 * (shared-slabs.ts) stays there too, retained until its request is done. A request that never is (the run ended with it
 * queued) keeps only its own slab from reuse, and the garbage collector takes that slab with the
 * request.
 */
import { isShared, releaseShared, retainShared } from "../workers/shared-slabs.js";
import type { RequestMemory } from "./requests.js";

/** A slab holds a few requests of the largest size (4 MiB by default) and thousands of a target's usual ones. */
const SLAB_BYTES = 8 * 1024 * 1024;
/** Slabs kept for reuse once empty: a scrape's worth of requests of a large cluster (more are left to the collector). */
const SPARE_SLABS = 8;

interface Slab {
  readonly memory: Buffer;
  /** Where the carved bodies start: the free part runs from the slab's start to here. */
  top: number;
  /** Bodies carved from it whose requests are not done yet. */
  held: number;
}

export class RequestSlabs implements RequestMemory {
  private current: Slab | undefined;
  private readonly spare: Slab[] = [];
  /** The slab of each body not yet released. */
  private readonly slabOf = new WeakMap<Uint8Array, Slab>();
  /** Bodies kept in a worker thread's shared slabs, retained until released here. */
  private readonly shared = new WeakSet<Uint8Array>();

  constructor(private readonly slabBytes = SLAB_BYTES) {}

  /**
   * The current slab's free part, to encode the next body into at its end (`hold` then keeps it
   * there); a slab with less than a quarter free gives way to another first, so that a receiver's
   * largest request (4 MiB, half a slab) mostly fits.
   */
  readonly room = (): Uint8Array => {
    const slab = this.slabWithRoom(this.slabBytes / 4);
    return slab.memory.subarray(0, slab.top);
  };

  /**
   * `bytes` kept in slab memory, where they stay until released: in place when they were written
   * at the end of `room()` or in a worker's shared slab, else copied in (a body already held stays
   * as it is; one larger than a slab is copied into an array of its own). A function of its own,
   * so it can be handed over as the place requests are kept (requests.ts, RequestMemory).
   */
  readonly hold = (bytes: Uint8Array): Uint8Array => {
    const length = bytes.byteLength;
    if (this.slabOf.has(bytes) || this.shared.has(bytes)) return bytes;
    if (length === 0) return new Uint8Array(0);
    if (isShared(bytes)) {
      retainShared(bytes);
      this.shared.add(bytes);
      return bytes;
    }
    const current = this.current;
    if (
      current !== undefined &&
      bytes.buffer === current.memory.buffer &&
      bytes.byteOffset + length === current.memory.byteOffset + current.top
    ) {
      current.top -= length;
      return this.carved(current, bytes);
    }
    return this.copiedIn([bytes]);
  };

  /**
   * `parts` kept in slab memory as one body (a request of several targets' bodies); the parts
   * themselves stay held until released. Where they lie back to back in one slab, each carved just
   * below the one before it in `parts` (the encoder writes a scrape's bodies one after another at
   * the end of the slab's free part), the body is the memory they span, without a copy: it holds
   * them in the reverse order, which a request does not mind (its ResourceMetrics are independent
   * of one another). Otherwise they are copied in, in order.
   */
  holdJoined(parts: readonly Uint8Array[]): Uint8Array {
    return this.spanned(parts) ?? this.copiedIn(parts);
  }

  /**
   * Whether `next` and `previous`, both held in slabs here, do not lie back to back (`next` just
   * below `previous` in one slab): a body joined from both would be a copy (holdJoined).
   */
  apart(previous: Uint8Array, next: Uint8Array): boolean {
    const slab = this.slabOf.get(previous);
    const nextSlab = this.slabOf.get(next);
    if (slab === undefined || nextSlab === undefined) return false;
    return nextSlab !== slab || next.byteOffset + next.byteLength !== previous.byteOffset;
  }

  /** The body spanning `parts` where each lies just below the one before it in one slab, held; else undefined. */
  private spanned(parts: readonly Uint8Array[]): Uint8Array | undefined {
    const first = parts[0];
    const slab = first === undefined ? undefined : this.slabOf.get(first);
    if (first === undefined || slab === undefined) return undefined;
    for (let i = 1; i < parts.length; i++) {
      const part = parts[i] as Uint8Array;
      if (!this.slabOf.has(part) || this.apart(parts[i - 1] as Uint8Array, part)) return undefined;
    }
    const last = parts[parts.length - 1] as Uint8Array;
    const memory = slab.memory;
    return this.carved(slab, memory.subarray(last.byteOffset - memory.byteOffset, first.byteOffset + first.byteLength - memory.byteOffset));
  }

  /** `parts` copied one after another into a body carved from a slab (one larger than a slab: an array of its own). */
  private copiedIn(parts: readonly Uint8Array[]): Uint8Array {
    let length = 0;
    for (const part of parts) length += part.byteLength;
    if (length > this.slabBytes) return Buffer.concat(parts);
    const slab = this.slabWithRoom(length);
    slab.top -= length;
    const body = slab.memory.subarray(slab.top, slab.top + length);
    let at = 0;
    for (const part of parts) {
      body.set(part, at);
      at += part.byteLength;
    }
    return this.carved(slab, body);
  }

  /** The request of `body` is done: its memory may be reused. A body not held here, or already released, is ignored. */
  release(body: Uint8Array): void {
    if (this.shared.delete(body)) {
      releaseShared([body]);
      return;
    }
    const slab = this.slabOf.get(body);
    if (slab === undefined) return;
    this.slabOf.delete(body);
    slab.held--;
    if (slab.held > 0) return;
    // The slab being carved is carved again from its end; a full one waits for the next use.
    if (slab === this.current) slab.top = slab.memory.length;
    else this.recycle(slab);
  }

  private carved(slab: Slab, body: Uint8Array): Uint8Array {
    slab.held++;
    this.slabOf.set(body, slab);
    return body;
  }

  /** The current slab, or another in its place when it has less than `bytes` free. */
  private slabWithRoom(bytes: number): Slab {
    let slab = this.current;
    if (slab === undefined || slab.top < bytes) {
      if (slab !== undefined && slab.held === 0) this.recycle(slab);
      slab = this.spare.pop() ?? { memory: Buffer.allocUnsafeSlow(this.slabBytes), top: this.slabBytes, held: 0 };
      this.current = slab;
    }
    return slab;
  }

  private recycle(slab: Slab): void {
    slab.top = slab.memory.length;
    if (this.spare.length < SPARE_SLABS) this.spare.push(slab);
  }
}
