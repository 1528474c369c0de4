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
 * Bodies are carved one after another, so a slab comes back when every request carved from it is
 * done. A request that never is (the run ended with it queued) keeps only its own slab from
 * reuse, and the garbage collector takes that slab with the request.
 */

/** A slab holds a few requests of the largest size (4 MiB by default) and thousands of a target's usual ones. */
const SLAB_BYTES = 8 * 1024 * 1024;
/** Slabs kept for reuse once empty: a scrape's worth of requests of a large cluster (more are left to the collector). */
const SPARE_SLABS = 8;

interface Slab {
  readonly memory: Buffer;
  /** Bytes carved so far (from the start). */
  used: number;
  /** Bodies carved from it whose requests are not done yet. */
  held: number;
}

export class RequestSlabs {
  private current: Slab | undefined;
  private readonly spare: Slab[] = [];
  /** The slab of each body not yet released. */
  private readonly slabOf = new WeakMap<Uint8Array, Slab>();

  constructor(private readonly slabBytes = SLAB_BYTES) {}

  /**
   * `bytes` copied into slab memory, where they stay until released (a body already held stays as
   * it is; one larger than a slab is copied into an array of its own). A function of its own, so
   * it can be handed over as the place requests are stored (requests.ts, StoreBytes).
   */
  readonly hold = (bytes: Uint8Array): Uint8Array => {
    const length = bytes.byteLength;
    if (this.slabOf.has(bytes)) return bytes;
    if (length > this.slabBytes) return Uint8Array.prototype.slice.call(bytes);
    if (length === 0) return new Uint8Array(0);
    let slab = this.current;
    if (slab === undefined || slab.used + length > slab.memory.length) {
      if (slab !== undefined && slab.held === 0) this.recycle(slab);
      slab = this.spare.pop() ?? { memory: Buffer.allocUnsafeSlow(this.slabBytes), used: 0, held: 0 };
      this.current = slab;
    }
    const body = slab.memory.subarray(slab.used, slab.used + length);
    body.set(bytes);
    slab.used += length;
    slab.held++;
    this.slabOf.set(body, slab);
    return body;
  };

  /** The request of `body` is done: its memory may be reused. A body not held here, or already released, is ignored. */
  release(body: Uint8Array): void {
    const slab = this.slabOf.get(body);
    if (slab === undefined) return;
    this.slabOf.delete(body);
    slab.held--;
    if (slab.held > 0) return;
    // The slab being carved starts again from its beginning; a full one waits for the next use.
    if (slab === this.current) slab.used = 0;
    else this.recycle(slab);
  }

  private recycle(slab: Slab): void {
    slab.used = 0;
    if (this.spare.length < SPARE_SLABS) this.spare.push(slab);
  }
}
