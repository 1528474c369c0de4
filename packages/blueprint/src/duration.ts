/**
 * Durations as people write them in blueprints and on the command line: "90s", "15m",
 * "1h30m", "7d", "250ms". Internally every duration is an integer number of milliseconds,
 * so the simulation's clock never accumulates floating-point drift.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;

/**
 * Parses "1h30m" into milliseconds; returns undefined when the text is not a duration, or when
 * it is too large to be an exact integer number of milliseconds (digits enough to overflow to
 * Infinity, or beyond 2^53 ms, where doubles stop counting every millisecond).
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < trimmed.length) {
    const start = PART.lastIndex;
    const match = PART.exec(trimmed);
    if (match === null || match.index !== start) return undefined;
    total += Number(match[1]) * (UNIT_MS[match[2] as string] as number);
  }
  const ms = Math.round(total);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** Formats milliseconds the way parseDuration reads them, largest units first ("1d2h", "45s"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(Math.round(ms));
  const parts: string[] = [];
  for (const unit of ["d", "h", "m", "s", "ms"] as const) {
    const size = UNIT_MS[unit] as number;
    if (rest >= size) {
      const count = Math.floor(rest / size);
      parts.push(`${count}${unit}`);
      rest -= count * size;
    }
  }
  return sign + parts.join("");
}
