/**
 * A process's times as Linux counts them in /proc, for tests that bound what a process did rather
 * than the wall clock (a loaded machine stretches the wall clock, not a process's own CPU), and for
 * `just test-cost` (vitest.file-cost.ts). Each is undefined where there is no /proc or the process
 * has gone.
 */
import { readFileSync } from "node:fs";

/** A process, or this one; undefined for one that never started (a ChildProcess's pid when its spawn failed). */
type Pid = number | "self" | undefined;

/** USER_HZ: Linux counts a process's CPU times in ticks of 10 ms. */
const MS_PER_TICK = 10;

/** The process's /proc/<pid>/stat fields from the state (field 3) on: those after the command's closing parenthesis. */
function statFields(pid: Pid): string[] | undefined {
  if (pid === undefined) return undefined;
  try {
    return (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").split(" ");
  } catch {
    return undefined;
  }
}

/** The sum of two of the stat fields (`first`, counted from 1 as proc(5) does, and the next), in ticks, as ms. */
function ticksMs(pid: Pid, first: number): number | undefined {
  const fields = statFields(pid);
  if (fields === undefined) return undefined;
  const ticks = Number(fields[first - 3]) + Number(fields[first - 2]);
  return Number.isFinite(ticks) ? ticks * MS_PER_TICK : undefined;
}

/** The CPU time the process has used, ms: all its threads (utime and stime, fields 14 and 15). */
export function cpuMsOf(pid: Pid): number | undefined {
  return ticksMs(pid, 14);
}

/** The CPU time of the children the process has reaped, ms (cutime and cstime, fields 16 and 17). */
export function reapedChildrenMsOf(pid: Pid): number | undefined {
  return ticksMs(pid, 16);
}

/** How long the process's main thread has waited on a run queue for a CPU, ms (/proc/<pid>/schedstat's second field, ns). */
export function queuedMsOf(pid: Pid): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const waitedNs = Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1]);
    return Number.isFinite(waitedNs) ? waitedNs / 1e6 : undefined;
  } catch {
    return undefined;
  }
}
