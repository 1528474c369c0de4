import { Rng } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";

describe("Rng (xoshiro128** seeded by SplitMix32)", () => {
  // Vectors printed by reference/xoshiro128starstar.c, a C transcription of the published
  // algorithm using native uint32 arithmetic: the JavaScript must agree bit for bit.
  const vectors: Record<number, number[]> = {
    0: [3809008728, 1133695204, 53579671, 2891528803, 139681546, 2203266335],
    1: [2442144158, 3238099751, 3819917871, 2104621829, 2021136066, 4223536128],
    20260105: [4039256413, 721530621, 1766630947, 2936033867, 340613561, 622407651],
    4294967295: [835879718, 1921286648, 2356205009, 1885780724, 980451116, 1053911718],
  };
  for (const [seed, expected] of Object.entries(vectors)) {
    it(`matches the C reference for seed ${seed}`, () => {
      const rng = new Rng(Number(seed));
      expect(expected.map(() => rng.nextUint32())).toEqual(expected);
    });
  }

  it("gives independent, reproducible streams per label", () => {
    const a1 = new Rng(7).fork("arrivals/x");
    const a2 = new Rng(7).fork("arrivals/x");
    const b = new Rng(7).fork("arrivals/y");
    const draw = (r: Rng) => Array.from({ length: 5 }, () => r.nextUint32());
    const first = draw(a1);
    expect(draw(a2)).toEqual(first);
    expect(draw(b)).not.toEqual(first);
  });

  it("draws uniform floats and exponential waits with the right means", () => {
    const rng = new Rng(99);
    let sum = 0;
    let expSum = 0;
    let min = 1;
    let max = 0;
    const n = 200_000;
    for (let i = 0; i < n; i++) {
      const u = rng.float();
      min = Math.min(min, u);
      max = Math.max(max, u);
      sum += u;
      expSum += rng.exponential(4);
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(1);
    expect(sum / n).toBeCloseTo(0.5, 2);
    expect(expSum / n).toBeCloseTo(0.25, 2);
  });

  it("formats UUIDs as version 4 with the RFC 4122 variant", () => {
    const rng = new Rng(3);
    for (let i = 0; i < 100; i++) expect(rng.uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
