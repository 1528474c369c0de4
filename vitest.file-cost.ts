/**
 * What each test file costs, for `just test-cost` (scripts/test-cost.mjs reads it): a setup file
 * vitest.config.ts adds when GPUSYNTH_TEST_COST names a file, which gets one line a test file —
 * the worker's own CPU (process.cpuUsage), the CPU of the children it reaped meanwhile (the
 * gpusynth runs, collectors and Prometheus servers the file started: /proc/self/stat's cutime and
 * cstime), its wall time, when it started and which worker ran it. A profile of the loaded suite
 * cannot say this: it counts a process's waits for a core as its own time (docs/contributing.md).
 */
import { appendFileSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, expect } from "vitest";

const out = process.env.GPUSYNTH_TEST_COST;
/** USER_HZ: Linux reports children's times in ticks of 10 ms. */
const MS_PER_TICK = 10;

/** CPU ms of the children this process has reaped (0 where /proc is not there). */
function reapedChildrenMs(): number {
  try {
    // The fields after the command's closing parenthesis start with the state (field 3):
    // cutime and cstime are fields 16 and 17.
    const fields = (readFileSync("/proc/self/stat", "utf8").split(") ")[1] ?? "").split(" ");
    return (Number(fields[13]) + Number(fields[14])) * MS_PER_TICK;
  } catch {
    return 0;
  }
}

let start: { file: string; cpu: NodeJS.CpuUsage; children: number; wall: number; at: number } | undefined;

beforeAll(() => {
  start = {
    file: expect.getState().testPath ?? "unknown",
    cpu: process.cpuUsage(),
    children: reapedChildrenMs(),
    wall: performance.now(),
    at: Date.now(),
  };
});

// Registered before the file's own hooks, so it runs after them: the file's teardown counts.
afterAll(() => {
  if (start === undefined || out === undefined) return;
  const cpu = process.cpuUsage(start.cpu);
  const row = [
    start.file,
    Math.round((cpu.user + cpu.system) / 1000),
    reapedChildrenMs() - start.children,
    Math.round(performance.now() - start.wall),
    start.at,
    process.pid,
  ];
  appendFileSync(out, `${row.join("\t")}\n`);
});
