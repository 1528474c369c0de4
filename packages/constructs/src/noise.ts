/**
 * Deterministic "noise" for telemetry values: a hash of a key and a time bucket mapped to
 * [0, 1). Values depend only on what is sampled and when, never on how often or in which
 * order samples are taken, so the same run gives the same numbers.
 */

export function unitHash(key: string, bucket = 0): number {
  return unitOfState(hashOn(hashState(bucket), key));
}

/**
 * unitHash in parts, for keys that share a prefix: `unitOfState(hashOn(hashOn(hashState(), a), b))`
 * is `unitHash(a + b)`, without making the joined string (a key hashed often with a prefix that
 * changes rarely hashes the prefix once).
 */
export function hashState(bucket = 0): number {
  return 0x811c9dc5 ^ bucket;
}

/** The state after `text` is hashed on from `state` (FNV-1a over UTF-16 code units). */
export function hashOn(state: number, text: string): number {
  let h = state;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

/** A hash state, mixed and mapped to [0, 1). */
export function unitOfState(state: number): number {
  return mixed(state) / 4_294_967_296;
}

/** A hash state's bits mixed (an avalanche finaliser), as an unsigned 32-bit integer: unitOfState's numerator. */
export function mixed(state: number): number {
  let h = state;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A value in [lo, hi) fixed for a key. */
export function between(key: string, lo: number, hi: number, bucket = 0): number {
  return within(unitHash(key, bucket), lo, hi);
}

/** A draw in [0, 1) carried into [lo, hi), as between carries its key's (for draws hashed in parts). */
export function within(unit: number, lo: number, hi: number): number {
  return lo + (hi - lo) * unit;
}

/** `words` × 8 hex digits fixed for a key: digests and IDs the simulation does not model. */
export function stableHex(key: string, words: number): string {
  let hex = "";
  // Word i is unitHash(key, i)'s 32 bits: the key is hashed from four states at once (a
  // Kubernetes event's UID is four words, a container ID eight), in one pass over its characters.
  for (let i = 0; i < words; i += 4) {
    let h0 = hashState(i);
    let h1 = hashState(i + 1);
    let h2 = hashState(i + 2);
    let h3 = hashState(i + 3);
    for (let c = 0; c < key.length; c++) {
      const code = key.charCodeAt(c);
      h0 = Math.imul(h0 ^ code, 0x01000193);
      h1 = Math.imul(h1 ^ code, 0x01000193);
      h2 = Math.imul(h2 ^ code, 0x01000193);
      h3 = Math.imul(h3 ^ code, 0x01000193);
    }
    hex += hexWord(h0);
    if (i + 1 < words) hex += hexWord(h1);
    if (i + 2 < words) hex += hexWord(h2);
    if (i + 3 < words) hex += hexWord(h3);
  }
  return hex;
}

/** The 8 hex digits of a hash state's mixed 32 bits (unitOfState's, before it maps them to [0, 1)). */
function hexWord(state: number): string {
  const h = mixed(state);
  return `${HEX_BYTE[(h >>> 24) & 0xff]}${HEX_BYTE[(h >>> 16) & 0xff]}${HEX_BYTE[(h >>> 8) & 0xff]}${HEX_BYTE[h & 0xff]}`;
}
const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** A UUID-shaped identifier (version 4 layout) fixed for a key, for objects the simulation does not name. */
export function stableUuid(key: string): string {
  const hex = stableHex(key, 4);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** `length` characters of `alphabet`, fixed by `key` (generated names and IDs that every run repeats). */
export function stableChars(alphabet: string, length: number, key: string): string {
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(unitHash(key, i) * alphabet.length)];
  return out;
}
