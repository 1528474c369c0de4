/**
 * Deterministic "noise" for telemetry values: a hash of a key and a time bucket mapped to
 * [0, 1). Values depend only on what is sampled and when, never on how often or in which
 * order samples are taken, so the same run gives the same numbers.
 */

export function unitHash(key: string, bucket = 0): number {
  let h = 0x811c9dc5 ^ bucket;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4_294_967_296;
}

/** A value in [lo, hi) fixed for a key. */
export function between(key: string, lo: number, hi: number, bucket = 0): number {
  return lo + (hi - lo) * unitHash(key, bucket);
}

/** `words` × 8 hex digits fixed for a key: digests and IDs the simulation does not model. */
export function stableHex(key: string, words: number): string {
  let hex = "";
  for (let i = 0; i < words; i++)
    hex += Math.floor(unitHash(key, i) * 2 ** 32)
      .toString(16)
      .padStart(8, "0");
  return hex;
}

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
