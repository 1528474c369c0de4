import { formatDuration, parseDuration } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";

describe("durations", () => {
  it.each([
    ["250ms", 250],
    ["90s", 90_000],
    ["15m", 900_000],
    ["1h30m", 5_400_000],
    ["7d", 604_800_000],
    ["1w", 604_800_000],
    ["1.5h", 5_400_000],
  ])("reads %s", (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(["", "5", "5 minutes", "h", "1h 30m", "-1h", "1y"])("refuses %j", (text) => expect(parseDuration(text)).toBeUndefined());

  it.each([`${"9".repeat(400)}d`, "999999999999w"])("refuses %j, too large to count every millisecond", (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );

  it("formats what it reads", () => {
    for (const ms of [1, 999, 1_000, 61_000, 5_400_000, 90_061_001]) expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});
