/**
 * Where a worker thread keeps the request bodies it encodes for the run's thread: slabs of
 * shared memory (SharedArrayBuffer) reused from one tick to the next.
 *
 * A body copied out into an array of its own for every request, then moved to the run's thread,
 * is fresh memory every time: the operating system hands it over page by page, the run's thread
 * copies it into its delivery's slabs (request-slabs.ts) and drops it, and the garbage collector of
 * both threads counts it until they collect. On hyperscale.yaml that was 330 to 440 MiB a shard
 * and 15 s interval, and a third of a second or more of CPU in the worker alone to take it.
 *
 * Here a body is carved from a slab the run's thread sees too (posting a view of shared memory
 * shares it, copies nothing). Bodies are carved from a slab's end towards its start: the protobuf
 * encoder writes a request back to front into the slab's free part (`room`), so the body is
 * already where it is to stay, and only what it cannot write there (JSON, a request that outgrew
 * the room) is copied in. A delivery that queues a body keeps it where it is too, retaining it
 * (retainShared) until its request is done; the run's thread releases the bodies it was handed
 * once its sink has taken a scrape (releaseShared), and a slab whose bodies are all released is
 * carved again from its end. Each slab counts its bodies not yet released in its first word, with
 * Atomics: carved here, retained and released there.
 */

import type { RequestMemory } from "../delivery/requests.js";

/** The slab's first bytes: the count of its bodies not yet released (an Int32), padded to 8. */
const HEADER_BYTES = 8;
/** As the delivery's slabs (request-slabs.ts): a few requests of the largest size, thousands of a target's usual ones. */
const SLAB_BYTES = 8 * 1024 * 1024;
/** Full slabs remembered for reuse (a tick of a hyperscale shard carves about 40); more are left to the collector. */
const KEPT_SLABS = 64;

interface Slab {
  readonly memory: Uint8Array;
  /** Its first word: bodies carved from it and not released yet. */
  readonly held: Int32Array;
  /** Where the carved bodies start: the free part runs from the header to here. */
  top: number;
}

export class SharedSlabs implements RequestMemory {
  private current: Slab | undefined;
  /** Full slabs, oldest first: reused once every body carved from one is released. */
  private readonly full: Slab[] = [];

  constructor(private readonly slabBytes = SLAB_BYTES) {}

  /**
   * The current slab's free part, to encode the next body into at its end (`hold` then keeps it
   * there); a slab with less than a quarter free gives way to an empty one first, so that a
   * receiver's largest request (4 MiB, half a slab) mostly fits.
   */
  readonly room = (): Uint8Array => {
    const slab = this.slabWithRoom(this.slabBytes / 4);
    return slab.memory.subarray(HEADER_BYTES, slab.top);
  };

  /**
   * `bytes` kept in shared memory, where they stay until the run's thread releases them: in place
   * when they were written at the end of `room()`, else copied in; a body larger than a slab is
   * copied into an array of its own (which a worker moves, as before).
   */
  readonly hold = (bytes: Uint8Array): Uint8Array => {
    const length = bytes.byteLength;
    const current = this.current;
    if (current !== undefined && bytes.buffer === current.memory.buffer && bytes.byteOffset + length === current.top && length > 0) {
      current.top = bytes.byteOffset;
      Atomics.add(current.held, 0, 1);
      return bytes;
    }
    if (length > this.slabBytes - HEADER_BYTES) return Uint8Array.prototype.slice.call(bytes);
    const slab = this.slabWithRoom(length);
    slab.top -= length;
    const body = slab.memory.subarray(slab.top, slab.top + length);
    body.set(bytes);
    Atomics.add(slab.held, 0, 1);
    return body;
  };

  /** The current slab, or an empty one in its place when it has less than `bytes` free. */
  private slabWithRoom(bytes: number): Slab {
    let slab = this.current;
    // Every body carved from the current slab is released: it is carved again from its end.
    if (slab !== undefined && Atomics.load(slab.held, 0) === 0) slab.top = slab.memory.byteLength;
    if (slab === undefined || slab.top - HEADER_BYTES < bytes) {
      if (slab !== undefined) this.retire(slab);
      slab = this.reusable() ?? newSlab(this.slabBytes);
      this.current = slab;
    }
    return slab;
  }

  private retire(slab: Slab): void {
    this.full.push(slab);
    if (this.full.length > KEPT_SLABS) this.full.shift();
  }

  /** A full slab whose bodies are all released, taken from the list. */
  private reusable(): Slab | undefined {
    const index = this.full.findIndex((slab) => Atomics.load(slab.held, 0) === 0);
    if (index < 0) return undefined;
    const [slab] = this.full.splice(index, 1) as [Slab];
    slab.top = slab.memory.byteLength;
    return slab;
  }
}

function newSlab(bytes: number): Slab {
  const shared = new SharedArrayBuffer(bytes);
  return { memory: new Uint8Array(shared), held: new Int32Array(shared, 0, 1), top: bytes };
}

/** Whether `body` was carved from a worker's shared slab. */
export function isShared(body: Uint8Array): boolean {
  return body.buffer instanceof SharedArrayBuffer;
}

/**
 * A body carved from a shared slab is kept beyond the scrape it came with (a delivery queues it):
 * its slab is not carved again until it is released once more (releaseShared).
 */
export function retainShared(body: Uint8Array): void {
  Atomics.add(new Int32Array(body.buffer, 0, 1), 0, 1);
}

/** The run's thread is done with these bodies (its sink took them, or their request is done): those in shared slabs may be carved again. */
export function releaseShared(bodies: Iterable<Uint8Array>): void {
  for (const body of bodies) if (isShared(body)) Atomics.sub(new Int32Array(body.buffer, 0, 1), 0, 1);
}
