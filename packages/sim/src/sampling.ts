/**
 * Drawing from the empirical distributions blueprints declare. The traces publish CDFs at a
 * few points (e.g. "59 % of jobs finish within 5 minutes"); between points we interpolate
 * linearly in log-time, which matches the straight segments those log-scale plots show.
 */
import type { Cdf } from "@gpusynth/blueprint";

/** A discrete value from [value, cumulative %] points: the first point whose % reaches u. */
export function sampleDiscrete(cdf: Cdf, u: number): number {
  const target = u * 100;
  for (const [value, pct] of cdf) if (target < pct) return value;
  return (cdf[cdf.length - 1] as readonly [number, number])[0];
}

/** A duration in ms from [duration ms, cumulative %] points, starting at `minMs` for 0 %. */
export function sampleDuration(minMs: number, cdf: Cdf, u: number): number {
  const target = u * 100;
  let prevValue = Math.max(1, minMs);
  let prevPct = 0;
  for (const [value, pct] of cdf) {
    if (target < pct) {
      if (pct === prevPct || value <= prevValue) return Math.round(value);
      const fraction = (target - prevPct) / (pct - prevPct);
      return Math.round(Math.exp(Math.log(prevValue) + fraction * (Math.log(value) - Math.log(prevValue))));
    }
    prevValue = value;
    prevPct = pct;
  }
  return Math.round(prevValue);
}
