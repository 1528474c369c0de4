/** Sampling the blueprints' empirical distributions reproduces the published CDF points. */
import { loadBlueprint } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";
import { ArrivalProcess } from "../src/arrivals.js";
import { Rng } from "../src/rng.js";
import { sampleDiscrete, sampleDuration } from "../src/sampling.js";
import { repoFile } from "./helpers.js";

const MIN = 60_000;

describe("empirical CDF sampling", () => {
  it("reproduces each published point of a duration CDF", () => {
    // Helios run-time points as lab.yaml declares them.
    const cdf = [
      [10_000, 8.7],
      [MIN, 24.1],
      [5 * MIN, 59.1],
      [60 * MIN, 86.9],
      [50 * 86_400_000, 100],
    ] as const;
    const rng = new Rng(5);
    const draws = Array.from({ length: 100_000 }, () => sampleDuration(1_000, cdf, rng.float()));
    for (const [value, pct] of cdf) {
      const share = (100 * draws.filter((d) => d <= value).length) / draws.length;
      expect(share).toBeCloseTo(pct, 0);
    }
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(1_000);
  });

  it("draws only the listed GPU counts, in their published shares", () => {
    const cdf = [
      [1, 75.8],
      [2, 80.8],
      [4, 87.9],
      [8, 100],
    ] as const;
    const rng = new Rng(6);
    const draws = Array.from({ length: 100_000 }, () => sampleDiscrete(cdf, rng.float()));
    expect(new Set(draws)).toEqual(new Set([1, 2, 4, 8]));
    expect((100 * draws.filter((d) => d === 1).length) / draws.length).toBeCloseTo(75.8, 0);
    expect((100 * draws.filter((d) => d <= 4).length) / draws.length).toBeCloseTo(87.9, 0);
  });
});

describe("arrivals", () => {
  const { blueprint } = loadBlueprint(repoFile("blueprints/lab.yaml"));
  const generator = blueprint.workloads[0];
  if (generator === undefined) throw new Error("lab.yaml declares no workload generator");
  const process = () => new ArrivalProcess(generator, ["someone"], blueprint.time.start, blueprint.time.utcOffsetHours, new Rng(8));

  it("submits the declared weekday rate on average", () => {
    const arrivals = process();
    let t = 0;
    let count = 0;
    const fortyWeeks = 280 * 86_400_000;
    for (;;) {
      t = arrivals.nextArrival(t) as number;
      if (t >= fortyWeeks) break;
      const day = new Date(blueprint.time.start + t).getUTCDay();
      if (day !== 0 && day !== 6) count++;
    }
    // 40 weeks hold 200 weekdays.
    expect(Math.abs(count / 200 - generator.arrivals.perDay)).toBeLessThan(0.5);
  });

  it("peaks at the declared hour with the declared peak-to-mean ratio", () => {
    const arrivals = process();
    const hourly = new Array<number>(24).fill(0);
    let t = 0;
    for (;;) {
      t = arrivals.nextArrival(t) as number;
      if (t >= 2_000 * 86_400_000) break;
      const hour = Math.floor((t % 86_400_000) / 3_600_000);
      hourly[hour] = (hourly[hour] ?? 0) + 1;
    }
    const mean = hourly.reduce((a, b) => a + b, 0) / 24;
    const peakHour = hourly.indexOf(Math.max(...hourly));
    expect(Math.abs(peakHour - (generator.arrivals.diurnal?.peakHour ?? 0))).toBeLessThanOrEqual(1);
    expect(Math.max(...hourly) / mean).toBeCloseTo(generator.arrivals.diurnal?.peakToMean ?? 1, 1);
  });
});
