/**
 * What simulating a blueprint will cost, predicted before a run starts, so that a blueprint
 * whose backlog grows without bound is refused instead of taking hours and gigabytes.
 *
 * The simulation's time goes to scheduling cycles, and each cycle attempts every pending workload
 * (as KAI-Scheduler does: bench/results/sim-speed.md, "Where the month's time goes"), so a span
 * costs in proportion to the backlog summed over its cycles. The backlog's trend is measured by a
 * short trial of the blueprint itself (two simulated hours from an empty cluster, stopped early
 * once it has attempted a fixed number of workloads, so it takes well under a second and the same
 * blueprint always gives the same estimate), then extended linearly over the span — or, where
 * every workload's user gives up after a while (pendingPatience), only until the longest patience
 * has passed: no workload pends longer, so the backlog holds no more than what that much time
 * leaves waiting. What a pending
 * workload costs per cycle grows with the nodes: about 0.65 µs on platform's 512 nodes (its
 * month, 201.7 s for a backlog growing to 324: bench/results/sim-speed.md) and 0.25 µs on lab's 4
 * (lab with its arrivals raised until the backlog dominates: 17 s for six hours growing to 5,700).
 * An estimate to refuse what cannot run, within a small factor, not exact.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { Simulation } from "./simulation.js";

const DAY_MS = 86_400_000;
const TRIAL_MS = 2 * 3_600_000;
const TRIAL_SLICE_MS = 60_000;
/** Attempts after which the trial stops (a fraction of a second on any cluster). */
const TRIAL_ATTEMPTS = 300_000;
/** µs per pending workload per cycle: a fixed part and a part per node (measured; see above). */
const ATTEMPT_MICROS_BASE = 0.25;
const ATTEMPT_MICROS_PER_NODE = 0.0008;
/** CPU seconds per simulated day per GPU for all but the backlog (platform: 0.59 s a day on 4,096 GPUs). */
const BASE_SECONDS_PER_GPU_DAY = 0.00015;

export interface CostEstimate {
  /** Workloads the generators submit per day, the week's mean. */
  readonly arrivalsPerDay: number;
  /** The backlog's growth per day, measured by the trial (0 when it does not grow). */
  readonly backlogGrowthPerDay: number;
  /**
   * When the backlog stops growing within the span because every workload's user gives up
   * (pendingPatience): the longest patience, after which it holds. Undefined otherwise.
   */
  readonly backlogHoldsAfterMs: number | undefined;
  /** Pending workloads expected at the end of the span. */
  readonly backlogAtEnd: number;
  /** CPU seconds the span is expected to take from an empty cluster. */
  readonly cpuSeconds: number;
}

/** Estimates the cost of simulating `spanMs` of `blueprint` from its start. */
export function estimateCost(blueprint: Blueprint, spanMs: number, seed?: number): CostEstimate {
  const nodes = blueprint.nodePools.reduce((sum, p) => sum + p.nodes, 0);
  const gpus = blueprint.nodePools.reduce((sum, p) => sum + p.nodes * p.gpusPerNode, 0);
  const period = blueprint.time.schedulingPeriod;
  const attemptSeconds = (ATTEMPT_MICROS_BASE + ATTEMPT_MICROS_PER_NODE * nodes) / 1e6;
  const arrivalsPerDay = blueprint.workloads.reduce((sum, g) => sum + (g.arrivals.perDay * (5 + 2 * g.arrivals.weekendFactor)) / 7, 0);

  // The trial: the backlog at the end of each slice, until the trial span or the attempt budget.
  const simulation = new Simulation(blueprint, seed === undefined ? {} : { seed });
  const trial: Array<{ t: number; pending: number }> = [];
  let attempts = 0;
  for (let t = TRIAL_SLICE_MS; t <= Math.min(TRIAL_MS, spanMs) && attempts < TRIAL_ATTEMPTS; t += TRIAL_SLICE_MS) {
    simulation.runUntil(t);
    const pending = simulation.pendingCount;
    trial.push({ t, pending });
    attempts += pending * (TRIAL_SLICE_MS / period);
  }
  // The trend over the trial's second half (its first half fills an empty cluster), or over all
  // of it when the attempt budget cut it short (a backlog that large is the trend).
  const last = trial.at(-1) ?? { t: 0, pending: 0 };
  const from = trial.length >= 4 ? (trial[Math.floor(trial.length / 2)] ?? last) : { t: 0, pending: 0 };
  const growthPerMs = last.t > from.t ? Math.max(0, (last.pending - from.pending) / (last.t - from.t)) : 0;

  // The backlog: as measured over the trial, then growing on at the trend; summed over cycles.
  let backlogMs = 0;
  let previous = { t: 0, pending: 0 };
  for (const point of trial) {
    backlogMs += ((previous.pending + point.pending) / 2) * (point.t - previous.t);
    previous = point;
  }
  const patience = longestPatience(blueprint);
  const growthEnd = patience === undefined ? spanMs : Math.min(spanMs, Math.max(last.t, patience));
  const growing = Math.max(0, growthEnd - last.t);
  const backlogAtEnd = last.pending + growthPerMs * growing;
  backlogMs += ((last.pending + backlogAtEnd) / 2) * growing + backlogAtEnd * Math.max(0, spanMs - Math.max(last.t, growthEnd));
  return {
    arrivalsPerDay,
    backlogGrowthPerDay: growthPerMs * DAY_MS,
    backlogHoldsAfterMs: growthEnd < spanMs ? growthEnd : undefined,
    backlogAtEnd: Math.round(backlogAtEnd),
    cpuSeconds: BASE_SECONDS_PER_GPU_DAY * gpus * (spanMs / DAY_MS) + (backlogMs / period) * attemptSeconds,
  };
}

/**
 * The longest time any workload of the blueprint waits before its user deletes it, or undefined
 * when some kind or submission declares no pendingPatience (its workloads may pend for ever).
 */
function longestPatience(blueprint: Blueprint): number | undefined {
  let longest = 0;
  const patiences = [...blueprint.workloads.flatMap((g) => g.mix), ...blueprint.submissions].map((w) => w.pendingPatience);
  for (const patience of patiences) {
    if (patience === undefined) return undefined;
    longest = Math.max(longest, patience);
  }
  return longest;
}
