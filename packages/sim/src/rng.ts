/**
 * The simulation's only source of randomness: xoshiro128** (Blackman & Vigna, 2018,
 * https://prng.di.unimi.it/xoshiro128starstar.c), seeded through SplitMix32. Every operation
 * is 32-bit integer arithmetic (Math.imul, >>> 0), so a seed gives the same sequence on every
 * platform and Node.js version. Floats derived from it use Math.log only, which V8
 * implements with its own fdlibm port, not the platform's libm.
 *
 * Independent streams (`fork`) keep one part of the simulation from shifting another's draws:
 * adding a generator to a blueprint does not change the fault times, for example.
 */

const TWO_POW_32 = 4_294_967_296;

function splitMix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** FNV-1a, to turn a stream label into 32 bits. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: number) {
    const init = splitMix32(seed);
    this.a = init();
    this.b = init();
    this.c = init();
    this.d = init();
    if ((this.a | this.b | this.c | this.d) === 0) this.d = 1;
  }

  /** An independent stream named by `label`, the same for the same seed and label. */
  fork(label: string): Rng {
    return new Rng((this.seed ^ fnv1a(label)) >>> 0);
  }

  /** Next 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.nextUint32() / TWO_POW_32;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Exponentially distributed with the given rate (events per unit). */
  exponential(rate: number): number {
    return -Math.log(1 - this.float()) / rate;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("Rng.pick from an empty list");
    return items[this.int(items.length)] as T;
  }

  /** Index drawn with probability proportional to weights[i]. */
  weightedIndex(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let u = this.float() * total;
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i] as number;
      if (u < 0) return i;
    }
    return weights.length - 1;
  }

  /** Random bytes as lowercase hex, for identifiers (UUIDs). */
  hex(length: number): string {
    let text = "";
    while (text.length < length) text += hex8(this.nextUint32());
    return text.slice(0, length);
  }

  /**
   * A version-4-shaped UUID drawn from this stream: the 32 hex digits of four draws (as hex(32)
   * gives them), with the version digit 4 and the variant's two bits set. Written as the character
   * codes of one flat string: every pod has one and keeps it for its life (a platform's month makes
   * millions), and text joined from parts is a tree of strings, about 450 bytes of heap a UUID instead of 60.
   */
  uuid(): string {
    const a = this.nextUint32();
    const b = this.nextUint32();
    const c = this.nextUint32();
    const d = this.nextUint32();
    const u = UUID_CODES;
    hexCodes(u, 0, a, 8);
    hexCodes(u, 9, b >>> 16, 4);
    u[15] = HEX_CODE[(b >>> 8) & 15] as number;
    hexCodes(u, 16, b & 255, 2);
    u[19] = HEX_CODE[((c >>> 28) & 0x3) | 0x8] as number;
    hexCodes(u, 20, (c >>> 16) & 0xfff, 3);
    hexCodes(u, 24, c & 0xffff, 4);
    hexCodes(u, 28, d, 8);
    return String.fromCharCode.apply(null, u);
  }
}

/** The UUID being written: its dashes and version digit stay, its hex digits are written over. */
const UUID_CODES = Array.from("00000000-0000-4000-8000-000000000000", (c) => c.charCodeAt(0));
/** Each hex digit's character code. */
const HEX_CODE = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));

/** The low `digits` hex digits of `value`, most significant first, as character codes into `codes` at `at`. */
function hexCodes(codes: number[], at: number, value: number, digits: number): void {
  for (let i = digits - 1; i >= 0; i--) {
    codes[at + i] = HEX_CODE[value & 15] as number;
    value >>>= 4;
  }
}

/** Each byte's two hex digits. */
const BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** A 32-bit word as 8 lowercase hex digits, most significant first. */
function hex8(word: number): string {
  return `${BYTE[word >>> 24]}${BYTE[(word >>> 16) & 255]}${BYTE[(word >>> 8) & 255]}${BYTE[word & 255]}`;
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
