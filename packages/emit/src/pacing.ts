/**
 * Advancing a run without starving the event loop: a live run (and a worker thread emitting a
 * shard) must keep answering scrapes, API requests and signals while it simulates.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { ClusterRun } from "@gpusynth/constructs";
import { type SimulatedMs, simulatedMs } from "@gpusynth/sim";

/**
 * Simulated time advanced between checks of the wall clock: a minute is cheap even for 4,096
 * GPUs, but a backlog of tens of thousands makes each scheduling cycle cost milliseconds, so the
 * slice shrinks (to a second) while slices take longer than a turn of the event loop may wait.
 */
const MAX_SLICE_MS = 60_000;
const MIN_SLICE_MS = 1_000;
/** Longest stretch of work between two turns of the event loop. */
const YIELD_EVERY_MS = 20;

/**
 * Advances the simulation towards `targetMs` in slices, yielding to the event loop between them;
 * stops early when aborted or after `budgetMs` of wall time (the run then emits what it has and
 * catches up on the next tick).
 */
export async function advance(
  run: ClusterRun,
  targetMs: SimulatedMs,
  signal?: AbortSignal,
  budgetMs = Number.POSITIVE_INFINITY,
  /** Called after each slice with the simulated time reached (a warm-up's progress). */
  onSlice?: (reachedMs: SimulatedMs) => void,
): Promise<void> {
  const started = performance.now();
  let slice = started;
  let sliceMs = slices.get(run) ?? MAX_SLICE_MS;
  while (run.now < targetMs && signal?.aborted !== true) {
    const before = performance.now();
    run.advanceTo(simulatedMs(Math.min(targetMs, run.now + sliceMs)));
    const now = performance.now();
    sliceMs = now - before > YIELD_EVERY_MS ? Math.max(MIN_SLICE_MS, sliceMs / 2) : Math.min(MAX_SLICE_MS, sliceMs * 2);
    slices.set(run, sliceMs);
    onSlice?.(run.now);
    if (now - started > budgetMs) return;
    if (now - slice > YIELD_EVERY_MS) {
      await yieldToEventLoop();
      slice = performance.now();
    }
  }
}

/** Each run's current slice: it adapts to what its simulation costs now, from one call to the next. */
const slices = new WeakMap<ClusterRun, number>();
