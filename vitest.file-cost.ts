/**
 * What each test file costs, for `just test-cost` (scripts/test-cost.mjs reads it): a setup file
 * vitest.config.ts adds when GPUSYNTH_TEST_COST names a file, which gets one line a test file —
 * the worker's own CPU (process.cpuUsage), the CPU of the children it reaped meanwhile (the
 * gpusynth runs, collectors and Prometheus servers the file started: /proc/self/stat's cutime and
 * cstime), its wall time, when it started, which worker ran it, and the worker's garbage collection
 * meanwhile (the pauses a PerformanceObserver reports: with --single-threaded-gc, vitest.config.ts,
 * all of the collector's work is in them). A profile of the loaded suite
 * cannot say this: it counts a process's waits for a core as its own time (docs/contributing.md).
 */
import { appendFileSync } from "node:fs";
import { type PerformanceEntry, PerformanceObserver } from "node:perf_hooks";
import { afterAll, beforeAll, expect } from "vitest";
import { reapedChildrenMsOf } from "./packages/cli/test/proc-times.js";

const out = process.env.GPUSYNTH_TEST_COST;
/**
 * The worker's garbage collection pauses so far, ms: one observer a worker, whatever number of
 * files it runs. Node.js makes a collection's entry on the event loop's next turn, which a file
 * computing between awaits does not give it: `settledMs` lets them all through before reading.
 */
class GcPauses {
  private ms = 0;
  private readonly observer = new PerformanceObserver((list) => this.add(list.getEntries()));

  constructor() {
    this.observer.observe({ entryTypes: ["gc"] });
  }

  async settledMs(): Promise<number> {
    await new Promise((resolve) => setImmediate(resolve));
    this.add(this.observer.takeRecords());
    return this.ms;
  }

  private add(entries: readonly PerformanceEntry[]): void {
    for (const entry of entries) this.ms += entry.duration;
  }
}
const workerGlobal = globalThis as { __gpusynthGc?: GcPauses };
workerGlobal.__gpusynthGc ??= new GcPauses();
const gc = workerGlobal.__gpusynthGc;

/**
 * Counted from here, where vitest evaluates this file again for each test file before it collects
 * the file's tests: work a file does while it is collected (a run in a `describe` body) counts.
 */
const start = {
  gcMs: await gc.settledMs(),
  cpu: process.cpuUsage(),
  children: reapedChildrenMsOf("self") ?? 0,
  wall: performance.now(),
  at: Date.now(),
};
let file: string | undefined;

beforeAll(() => {
  file = expect.getState().testPath ?? "unknown";
});

// Registered before the file's own hooks, so it runs after them: the file's teardown counts.
afterAll(async () => {
  if (file === undefined || out === undefined) return;
  const gcMs = await gc.settledMs();
  const cpu = process.cpuUsage(start.cpu);
  const row = [
    file,
    Math.round((cpu.user + cpu.system) / 1000),
    (reapedChildrenMsOf("self") ?? 0) - start.children,
    Math.round(performance.now() - start.wall),
    start.at,
    process.pid,
    Math.round(gcMs - start.gcMs),
  ];
  appendFileSync(out, `${row.join("\t")}\n`);
});
