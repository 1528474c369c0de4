/**
 * A protobuf writer that fills its buffer from the end. Written back to front, a message's
 * length is known the moment its fields are written — `end - pos` — so a length-delimited field
 * is written in one pass, with no size estimate beforehand and no bytes moved afterwards. The
 * cost: fields are written in reverse order (last field first, a repeated field's last element
 * first), which is the caller's business.
 */

/**
 * Node's Buffer writes a string's bytes through these methods of its own (lib/internal/buffer.js,
 * on every Buffer since Node.js 8); `Buffer.prototype.write` only adds the handling of its optional
 * arguments and the lookup of its encoding by name, which cost as much as the copy itself for a
 * label set's hundred-odd bytes — written once for every point of a scrape.
 */
interface StringWriters {
  latin1Write(text: string, offset: number, length: number): number;
  utf8Write(text: string, offset: number, length: number): number;
}
type WritableBuffer = Buffer & StringWriters;
const STRING_WRITERS = Buffer.prototype as unknown as Partial<StringWriters>;
if (typeof STRING_WRITERS.latin1Write !== "function" || typeof STRING_WRITERS.utf8Write !== "function")
  throw new Error("this Node.js has no Buffer.prototype.latin1Write/utf8Write");

export class ReverseWriter {
  /** The writer's own buffer (a Buffer for its native latin1 copy; written through its Uint8Array methods otherwise). */
  private own: WritableBuffer;
  /** Where the message is written: the writer's own buffer, or the memory `reset` was given. */
  private buffer: WritableBuffer;
  private view: DataView;
  /** Where the written bytes start; they run to the buffer's end. */
  private pos: number;

  constructor(capacity = 64 * 1024) {
    this.own = Buffer.allocUnsafeSlow(capacity) as WritableBuffer;
    this.buffer = this.own;
    this.view = new DataView(this.own.buffer, this.own.byteOffset, this.own.byteLength);
    this.pos = capacity;
  }

  /**
   * Starts a new message. Given `into`, the message is written there, ending at its end — memory
   * where it is to stay (a request slab's free part: request-slabs.ts), so it need not be copied
   * there afterwards; a message that outgrows it moves to the writer's own buffer, which grows.
   */
  reset(into?: Uint8Array): void {
    const target =
      into === undefined || into.byteLength === 0
        ? this.own
        : (Buffer.from(into.buffer, into.byteOffset, into.byteLength) as WritableBuffer);
    if (target !== this.buffer) {
      this.buffer = target;
      this.view = new DataView(target.buffer, target.byteOffset, target.byteLength);
    }
    this.pos = target.length;
  }

  /** The message written, as a view of the memory it was written into: valid until the writer is written again. */
  written(): Uint8Array {
    return this.buffer.subarray(this.pos);
  }

  /** The message written, copied out of the writer's buffer. */
  finish(): Uint8Array {
    // A copy: Buffer's own slice() would be a view of the writer's buffer.
    return Uint8Array.prototype.slice.call(this.buffer, this.pos);
  }

  /** Makes room for `bytes` more in front of what is written: the writer's own buffer, grown, takes the message. */
  private reserve(bytes: number): void {
    if (this.pos >= bytes) return;
    const written = this.buffer.length - this.pos;
    // Out of memory it was given, the message moves to the writer's own buffer, grown only if it must.
    let capacity = this.buffer === this.own ? this.own.length * 2 : this.own.length;
    while (capacity - written < bytes) capacity *= 2;
    const grown = capacity === this.own.length ? this.own : (Buffer.allocUnsafeSlow(capacity) as WritableBuffer);
    grown.set(this.buffer.subarray(this.pos), capacity - written);
    this.own = grown;
    this.buffer = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
    this.pos = capacity - written;
  }

  /** One byte: every tag of a field numbered below 16. */
  byte(value: number): void {
    this.reserve(1);
    this.buffer[--this.pos] = value;
  }

  bytes(value: Uint8Array): void {
    this.reserve(value.length);
    this.pos -= value.length;
    this.buffer.set(value, this.pos);
  }

  /** An unsigned varint below 2^32 (lengths, enums, small counts). */
  uint32(value: number): void {
    const size = varintSize(value);
    this.reserve(size);
    this.pos -= size;
    let at = this.pos;
    let v = value >>> 0;
    while (v > 0x7f) {
      this.buffer[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buffer[at] = v;
  }

  /** How many bytes are written: where a length-delimited field's content ends (the buffer may grow in between). */
  mark(): number {
    return this.buffer.length - this.pos;
  }

  /** Bytes held in a string, one per character (what `latin1Since` made). */
  latin1(bytes: string): void {
    this.reserve(bytes.length);
    this.pos -= bytes.length;
    this.buffer.latin1Write(bytes, this.pos, bytes.length);
  }

  /**
   * The bytes written since `mark` as a string of one character per byte: kept bytes that cost
   * one compact heap object, where a Uint8Array of their own costs a view, a buffer and memory
   * outside the heap (three times as much for a label set's ~150 bytes).
   */
  latin1Since(mark: number): string {
    return this.buffer.toString("latin1", this.pos, this.buffer.length - mark);
  }

  /** A length-delimited field's prefix for the bytes written since `mark`: its length, then its tag. */
  delimit(tag: number, mark: number): void {
    this.uint32(this.buffer.length - this.pos - mark);
    this.byte(tag);
  }

  double(value: number): void {
    this.reserve(8);
    this.pos -= 8;
    this.view.setFloat64(this.pos, value, true);
  }

  fixed64(low: number, high: number): void {
    this.reserve(8);
    this.pos -= 8;
    this.view.setUint32(this.pos, low >>> 0, true);
    this.view.setUint32(this.pos + 4, high >>> 0, true);
  }

  /** A string's UTF-8 bytes (a lone surrogate as U+FFFD, as TextEncoder writes it) and their length. */
  string(value: string): void {
    const length = Buffer.byteLength(value, "utf8");
    this.reserve(length);
    this.pos -= length;
    this.buffer.utf8Write(value, this.pos, length);
    this.uint32(length);
  }

  /**
   * A length-delimited message of three fields, written with one bounds check: `head` (bytes,
   * written first), a double field of tag `valueTag`, and `tail` (bytes, written last) — OTLP's
   * NumberDataPoint of the common kind (its times, its double, its attributes), a scrape's most
   * written message.
   */
  numberPoint(tag: number, head: Uint8Array, valueTag: number, value: number, tail: string): void {
    const length = head.length + 9 + tail.length;
    const prefix = varintSize(length);
    this.reserve(length + prefix + 1);
    let at = this.pos - tail.length;
    this.buffer.latin1Write(tail, at, tail.length);
    at -= 8;
    this.view.setFloat64(at, value, true);
    this.buffer[--at] = valueTag;
    at -= head.length;
    this.buffer.set(head, at);
    this.pos = at;
    this.uint32(length);
    this.buffer[--this.pos] = tag;
  }

  /** A varint of an integer in the int64 range (negative ones take ten bytes, as int64 does). */
  int64(value: number): void {
    if (value >= 0 && value <= 0xffffffff) {
      this.uint32(value);
      return;
    }
    let [low, high] = int64Halves(value);
    const out: number[] = [];
    while (high > 0 || low > 0x7f) {
      out.push((low & 0x7f) | 0x80);
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    out.push(low);
    this.bytes(Uint8Array.from(out));
  }
}

function varintSize(value: number): number {
  const v = value >>> 0;
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  return 5;
}

/** A protobuf tag: field number and wire type. */
export const tag = (field: number, wireType: 0 | 1 | 2): number => (field << 3) | wireType;

/** The two's complement halves of an integer in the int64 range, as fixed64 and varints carry it. */
export function int64Halves(value: number): [low: number, high: number] {
  const abs = Math.abs(value);
  let low = abs >>> 0;
  let high = Math.floor(abs / 0x100000000) >>> 0;
  if (value < 0) {
    low = ~low >>> 0;
    high = ~high >>> 0;
    low = (low + 1) >>> 0;
    if (low === 0) high = (high + 1) >>> 0;
  }
  return [low, high];
}

/** Nanoseconds since the epoch of an HrTime ([seconds, nanoseconds]), as fixed64's halves, exactly. */
export function hrTimeHalves(seconds: number, nanos: number): [low: number, high: number] {
  // seconds × 1e9 passes 2^53: the seconds are split at 2^16 so every product stays exact.
  const fromLowSeconds = (seconds % 0x10000) * 1e9 + nanos;
  const fromHighSeconds = Math.floor(seconds / 0x10000) * 1e9; // to be shifted left 16 bits
  const low = (fromLowSeconds % 0x100000000) + (fromHighSeconds % 0x10000) * 0x10000;
  const high = Math.floor(fromLowSeconds / 0x100000000) + Math.floor(fromHighSeconds / 0x10000) + Math.floor(low / 0x100000000);
  return [low >>> 0, high >>> 0];
}
