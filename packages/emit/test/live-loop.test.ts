/**
 * A live run's loop on a test's clock (ManualClock): the same code that paces a real run, with
 * wall time that moves only when the run waits. Frames come every --interval of wall time, each
 * where --speed puts the simulation then; --duration ends the run on time with a last frame;
 * a simulation that cannot keep up reports how far behind it is; an abort ends it at once.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";
import { type LiveStatus, runLive } from "../src/live.js";
import { ManualClock } from "../src/wall-clock.js";

const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url)));
const T0 = Date.UTC(2026, 11, 4, 12);
const SECOND = 1_000;

async function live(options: { speed: number; intervalMs: number; durationMs: number; abortAfter?: number }) {
  const clock = new ManualClock(T0);
  const abort = new AbortController();
  const ticks: LiveStatus[] = [];
  const last = await runLive(blueprint, {
    ...options,
    warmupMs: 0,
    signal: abort.signal,
    wallClock: clock,
    onTick: (status) => {
      ticks.push(status);
      if (ticks.length === options.abortAfter) abort.abort();
    },
  });
  return { ticks, last, endedAt: clock.now() - T0 };
}

describe("a live run's loop on a test's clock", () => {
  it("takes a frame every interval of wall time, where --speed puts the simulation, each stamped with its wall time", async () => {
    const { ticks, endedAt } = await live({ speed: 60, intervalMs: 15 * SECOND, durationMs: 60 * SECOND });
    expect(ticks.map((t) => t.simulatedMs / SECOND)).toEqual([0, 900, 1800, 2700, 3600]);
    expect(ticks.map((t) => t.stampedMs - T0)).toEqual([0, 15, 30, 45, 60].map((s) => s * SECOND));
    expect(ticks.every((t) => t.behindMs === 0)).toBe(true);
    expect(endedAt).toBe(60 * SECOND);
  });

  it("ends at --duration with a last frame there, not at the next interval", async () => {
    const { ticks, endedAt } = await live({ speed: 60, intervalMs: 15 * SECOND, durationMs: 2 * SECOND });
    expect(ticks.map((t) => t.simulatedMs / SECOND)).toEqual([0, 120]);
    expect(endedAt).toBe(2 * SECOND);
  });

  it("says how far behind the wall clock it is at a --speed no CPU can follow, and still ends on time", async () => {
    const { ticks, endedAt, last } = await live({ speed: 1e9, intervalMs: 100, durationMs: 300 });
    expect(ticks).toHaveLength(4);
    expect(endedAt).toBe(300);
    for (const t of ticks.slice(1)) expect(t.behindMs).toBeGreaterThan(0);
    expect(last.behindMs).toBe(ticks.at(-1)?.behindMs);
  });

  it("ends at once when aborted", async () => {
    const { ticks, endedAt } = await live({ speed: 60, intervalMs: 15 * SECOND, durationMs: 3_600 * SECOND, abortAfter: 2 });
    expect(ticks).toHaveLength(2);
    expect(endedAt).toBe(15 * SECOND);
  });
});
