/**
 * Advancing a run without starving the event loop: a live run (and a worker thread emitting a
 * shard) must keep answering scrapes, API requests and signals while it simulates.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { ClusterRun } from "@gpusynth/constructs";
import { type SimulatedMs, simulatedMs } from "@gpusynth/sim";

/** Simulated time advanced between checks of the wall clock (cheap even for 4,096 GPUs). */
const SIMULATION_SLICE_MS = 60_000;
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
): Promise<void> {
  const started = performance.now();
  let slice = started;
  while (run.now < targetMs && signal?.aborted !== true) {
    run.advanceTo(simulatedMs(Math.min(targetMs, run.now + SIMULATION_SLICE_MS)));
    const now = performance.now();
    if (now - started > budgetMs) return;
    if (now - slice > YIELD_EVERY_MS) {
      await yieldToEventLoop();
      slice = performance.now();
    }
  }
}
