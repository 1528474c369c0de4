import { divideFairShare } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";

const claim = (deserved: number, overQuotaWeight: number, requested: number, limit = -1) => ({
  deserved,
  overQuotaWeight,
  requested,
  limit,
});

describe("divideFairShare (KAI proportion plugin)", () => {
  it("gives each queue its deserved quota first, capped by what it requests", () => {
    expect(divideFairShare(8, [claim(4, 1, 2), claim(4, 1, 4)])).toEqual([2, 4]);
  });

  it("divides idle GPUs by over-quota weight among queues that want more", () => {
    expect(divideFairShare(12, [claim(2, 1, 100), claim(2, 2, 100), claim(2, 3, 100)])).toEqual([3, 4, 5]);
  });

  it("hands a satisfied queue's unused slice to the others in later rounds", () => {
    // Round 1: slices of 10 left are 5 / 5; queue 0 wants only 1 more; queue 1 gets the other 9.
    expect(divideFairShare(12, [claim(1, 1, 2), claim(1, 1, 100)])).toEqual([2, 10]);
  });

  it("never exceeds a queue's limit", () => {
    expect(divideFairShare(16, [claim(2, 1, 100, 4), claim(2, 1, 100)])).toEqual([4, 12]);
  });

  it("gives a zero-weight queue nothing over its deserved quota", () => {
    expect(divideFairShare(16, [claim(2, 0, 100), claim(2, 1, 100)])).toEqual([2, 14]);
  });

  it("distributes leftover whole GPUs by largest remainder, older queue first on ties", () => {
    expect(divideFairShare(7, [claim(0, 1, 10), claim(0, 1, 10), claim(0, 1, 10)])).toEqual([3, 2, 2]);
  });

  it("hands out no more than the capacity even when deserved quotas over-subscribe it", () => {
    const shares = divideFairShare(8, [claim(8, 1, 8), claim(8, 1, 8)]);
    expect(shares).toEqual([8, 8]); // deserved is honoured as declared; reclaim sorts it out
    expect(divideFairShare(10, [claim(2, 1, 6), claim(2, 1, 6)]).reduce((a, b) => a + b, 0)).toBe(10);
  });
});
