/**
 * Progress lines as a person (on a terminal) or a CI log (not on one) sees them: how far, how
 * fast, how long is left — redrawn on a terminal, a plain line every 10 s otherwise.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Output } from "../src/output.js";
import { Progress, readable } from "../src/progress.js";

const HOUR = 3_600_000;

function output(interactive: boolean): { output: Output; lines: string[] } {
  const lines: string[] = [];
  return { output: { out: () => {}, err: (text) => lines.push(text), interactive }, lines };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["performance", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("progress", () => {
  it("writes a plain line every 10 s off a terminal, with the share done, the rate and the time left", () => {
    const { output: out, lines } = output(false);
    const progress = new Progress(out, "run platform", 30 * 24 * HOUR);
    progress.update(HOUR);
    expect(lines).toEqual([]);
    vi.advanceTimersByTime(10_000);
    progress.update(3 * 24 * HOUR); // a tenth in 10 s: 90 s left
    vi.advanceTimersByTime(5_000);
    progress.update(4 * 24 * HOUR);
    expect(lines).toEqual(["run platform: 3d of 30d (10%), ×25,920 real time, about 1m30s left\n"]);
    progress.finish();
    expect(lines).toHaveLength(1);
  });

  it("redraws one line on a terminal, at most five times a second, and clears it at the end", () => {
    const { output: out, lines } = output(true);
    const progress = new Progress(out, "check-signals", 8, { noun: "blueprints" });
    vi.advanceTimersByTime(1_000);
    progress.update(2, "running platform");
    vi.advanceTimersByTime(100);
    progress.update(3, "running platform");
    expect(lines).toEqual(["\rcheck-signals: 2 of 8 blueprints (25%), about 3s left, running platform\u001b[K"]);
    progress.finish();
    expect(lines.at(-1)).toBe("\r\u001b[K");
  });

  it("makes a caller's note only for the lines it draws, not for every step", () => {
    const { output: out, lines } = output(false);
    const progress = new Progress(out, "run platform", 30 * 24 * HOUR);
    let made = 0;
    const note = () => `${++made} made`;
    for (let step = 1; step <= 1_000; step++) progress.update(step * 60_000, note);
    expect(made).toBe(0);
    vi.advanceTimersByTime(10_000);
    progress.update(2 * 24 * HOUR, note);
    expect(made).toBe(1);
    expect(lines.at(-1)).toMatch(/, 1 made\n$/);
  });

  it("prints durations a person reads at a glance", () => {
    expect([readable(0), readable(4 * HOUR + 42 * 60_000 + 17_400), readable(61_700)]).toEqual(["0s", "4h42m", "1m2s"]);
  });
});
