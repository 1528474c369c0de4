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
 * shares it, copies nothing); once the sink has stored a scrape (its delivery copies the bodies
 * into its own slabs), the run's thread releases the bodies (releaseShared), and a slab whose
 * bodies are all released is carved again from its start. Each slab counts its bodies not yet
 * released in its first word, with Atomics: carved here, released there.
 */

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
  /** Bytes carved so far, header included. */
  used: number;
}

export class SharedSlabs {
  private current: Slab | undefined;
  /** Full slabs, oldest first: reused once every body carved from one is released. */
  private readonly full: Slab[] = [];

  constructor(private readonly slabBytes = SLAB_BYTES) {}

  /**
   * `bytes` copied into shared memory, where they stay until the run's thread releases them; a body
   * larger than a slab is copied into an array of its own (which a worker moves, as before).
   */
  readonly hold = (bytes: Uint8Array): Uint8Array => {
    const length = bytes.byteLength;
    if (length > this.slabBytes - HEADER_BYTES) return Uint8Array.prototype.slice.call(bytes);
    let slab = this.current;
    // Every body carved from the current slab is released: it starts again from its beginning.
    if (slab !== undefined && Atomics.load(slab.held, 0) === 0) slab.used = HEADER_BYTES;
    if (slab === undefined || slab.used + length > slab.memory.byteLength) {
      if (slab !== undefined) this.retire(slab);
      slab = this.reusable() ?? newSlab(this.slabBytes);
      this.current = slab;
    }
    const body = slab.memory.subarray(slab.used, slab.used + length);
    body.set(bytes);
    slab.used += length;
    Atomics.add(slab.held, 0, 1);
    return body;
  };

  private retire(slab: Slab): void {
    this.full.push(slab);
    if (this.full.length > KEPT_SLABS) this.full.shift();
  }

  /** A full slab whose bodies are all released, taken from the list. */
  private reusable(): Slab | undefined {
    const index = this.full.findIndex((slab) => Atomics.load(slab.held, 0) === 0);
    if (index < 0) return undefined;
    const [slab] = this.full.splice(index, 1) as [Slab];
    slab.used = HEADER_BYTES;
    return slab;
  }
}

function newSlab(bytes: number): Slab {
  const shared = new SharedArrayBuffer(bytes);
  return { memory: new Uint8Array(shared), held: new Int32Array(shared, 0, 1), used: HEADER_BYTES };
}

/** The run's thread is done with these bodies (its sink stored them): those in shared slabs may be carved again. */
export function releaseShared(bodies: Iterable<Uint8Array>): void {
  for (const body of bodies) if (body.buffer instanceof SharedArrayBuffer) Atomics.sub(new Int32Array(body.buffer, 0, 1), 0, 1);
}
