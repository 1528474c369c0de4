/**
 * kube-state-metrics' horizontal sharding (pkg/sharding/listwatch.go@76c5888, v2.13.0): every
 * instance lists and watches every object, and keeps those whose UID hashes to its shard — the
 * 64-bit FNV-1a of the UID's bytes (Go's hash/fnv New64a), put in a bucket by Google's jump
 * consistent hash (github.com/dgryski/go-jump@ba001c3, the version its go.mod requires). The
 * README's "md5 sum … modulo" is not what the code does, at the pin or since sharding came in
 * (84d61f9a): gpusynth follows the code (signals/kube-state-metrics.md, "Sharding").
 */
import { stableUuid } from "../noise.js";

/** FNV-1a 64's offset basis, as two 32-bit halves. */
const OFFSET_HIGH = 0xcbf29ce4;
const OFFSET_LOW = 0x84222325;
/** The jump hash's linear congruential multiplier (Lamping and Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm"). */
const JUMP_MULTIPLIER = 2862933555777941757n;
const TWO_POW_31 = 2 ** 31;

/**
 * FNV-1a 64 of a string's UTF-16 code units taken as bytes: exact for the ASCII of a UID. The
 * prime is 2^40 + 0x1b3, so a step is h·0x1b3 + (h << 40), worked on 32-bit halves without BigInt.
 */
export function fnv1a64(text: string): bigint {
  let high = OFFSET_HIGH;
  let low = OFFSET_LOW;
  for (let i = 0; i < text.length; i++) {
    low = (low ^ text.charCodeAt(i)) >>> 0;
    const lowProduct = low * 0x1b3; // below 2^41: exact
    const carry = Math.floor(lowProduct / 4_294_967_296);
    high = (Math.imul(high, 0x1b3) + carry + ((low & 0xffffff) << 8)) >>> 0;
    low = lowProduct >>> 0;
  }
  return (BigInt(high) << 32n) | BigInt(low);
}

/** go-jump's Hash: the bucket in [0, buckets) of a 64-bit key, the same float64 steps as Go takes. */
export function jumpHash(key: bigint, buckets: number): number {
  let bucket = -1;
  let next = 0;
  let k = key;
  while (next < buckets) {
    bucket = next;
    k = BigInt.asUintN(64, k * JUMP_MULTIPLIER + 1n);
    next = Math.floor((bucket + 1) * (TWO_POW_31 / (Number(k >> 33n) + 1)));
  }
  return bucket;
}

/** The shard (0 … total − 1) of kube-state-metrics that keeps the object with this UID. */
export function shardOfUid(uid: string, total: number): number {
  return total === 1 ? 0 : jumpHash(fnv1a64(uid), total);
}

/**
 * Each UID's shard, worked out once while its object lives: a pod's shard is asked every scrape
 * of its life. A UID not asked for during a collect is forgotten at the end of the next.
 */
export class UidShards {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();

  constructor(readonly total: number) {}

  /** Starts a collect. */
  startCollect(): void {
    if (this.total === 1) return;
    this.previous = this.current;
    this.current = new Map();
  }

  of(uid: string): number {
    if (this.total === 1) return 0;
    let shard = this.current.get(uid);
    if (shard === undefined) {
      shard = this.previous.get(uid) ?? shardOfUid(uid, this.total);
      this.current.set(uid, shard);
    }
    return shard;
  }
}

/**
 * The metadata.uid of an object gpusynth names but emits no UID of (a node, a namespace, a
 * controller): only kube-state-metrics' sharding reads it. Fixed for the object's kind and name.
 */
export function objectUid(kind: string, namespace: string, name: string): string {
  return stableUuid(`${kind}/${namespace}/${name}`);
}
