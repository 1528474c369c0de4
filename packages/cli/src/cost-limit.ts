/**
 * The limit on what a run may cost, checked before it starts (sim's estimateCost predicts it):
 * a blueprint whose backlog would grow past what a scheduling cycle can attempt in reasonable
 * time, or whose simulation would take more than half an hour of CPU, is refused with exit 2,
 * naming the limit and --no-cost-limit, which runs it anyway.
 */
import { type Blueprint, formatDuration } from "@gpusynth/blueprint";
import { type CostEstimate, estimateCost } from "@gpusynth/sim";
import { UsageError } from "./usage.js";

/**
 * Pending workloads a run may reach: every scheduling cycle attempts each of them (KAI does), so
 * at 50,000 a simulated second costs milliseconds to tens of milliseconds of CPU and a day of it
 * hours. The shipped blueprints stay under 400 in a month (bench/results/sim-speed.md).
 */
export const MAX_BACKLOG = 50_000;
/** CPU a run's simulation may be expected to take. */
export const MAX_CPU_SECONDS = 1_800;

export const NO_COST_LIMIT = "--no-cost-limit";

const count = (n: number) => Math.round(n).toLocaleString("en-US");

/** The estimate in a sentence, for validate's summary, with the limits it is beyond. */
export function describeCost(estimate: CostEstimate, spanMs: number): string {
  const holdsAfter = estimate.backlogHoldsAfterMs;
  const backlog =
    estimate.backlogGrowthPerDay <= 0
      ? "the backlog stays steady"
      : holdsAfter === undefined
        ? `the backlog grows by about ${count(estimate.backlogGrowthPerDay)} workloads a day (${count(estimate.backlogAtEnd)} pending after ${formatDuration(spanMs)})`
        : `the backlog grows by about ${count(estimate.backlogGrowthPerDay)} workloads a day until its users give up (pendingPatience, ${formatDuration(holdsAfter)}), then holds at about ${count(estimate.backlogAtEnd)}`;
  const beyond = beyondLimits(estimate);
  const limits = beyond.length === 0 ? "" : `; beyond gpusynth run's limits (it would ${beyond.join(" and ")}): it needs ${NO_COST_LIMIT}`;
  return `about ${count(estimate.arrivalsPerDay)} workloads submitted a day; ${backlog}; ${formatDuration(spanMs)} simulated takes ${cpu(estimate.cpuSeconds)} of CPU${limits}`;
}

function cpu(seconds: number): string {
  if (seconds < 1) return "under a second";
  return `about ${seconds < 60 ? `${Math.round(seconds)} s` : formatDuration(Math.round(seconds / 60) * 60_000)}`;
}

/** What an estimate exceeds, each as what the run would do ("build a backlog of …"). */
function beyondLimits(estimate: CostEstimate): string[] {
  const beyond: string[] = [];
  if (estimate.backlogAtEnd > MAX_BACKLOG)
    beyond.push(
      `build a backlog of about ${count(estimate.backlogAtEnd)} pending workloads (the limit is ${count(MAX_BACKLOG)}: each scheduling cycle attempts every one)`,
    );
  if (estimate.cpuSeconds > MAX_CPU_SECONDS)
    beyond.push(`take ${cpu(estimate.cpuSeconds)} of CPU (the limit is ${formatDuration(MAX_CPU_SECONDS * 1000)})`);
  return beyond;
}

/**
 * Refuses a run of `spanMs` simulated time beyond the limits, unless `overridden`; `what` says
 * what the span is ("24h simulated", "the 1d warm-up and a simulated day served").
 */
export function checkCost(
  blueprint: Blueprint,
  file: string,
  spanMs: number,
  what: string,
  seed: number | undefined,
  overridden: boolean,
): void {
  if (overridden) return;
  const estimate = estimateCost(blueprint, spanMs, seed);
  const beyond = beyondLimits(estimate);
  if (beyond.length === 0) return;
  throw new UsageError(
    `${file}: expected a run within the cost limits, found that ${what} would ${beyond.join(" and ")}; ${count(estimate.arrivalsPerDay)} workloads are submitted a day and the backlog grows by about ${count(estimate.backlogGrowthPerDay)} a day. Fewer arrivals (workloads[].arrivals.perDay), users who give up (pendingPatience), a shorter run, or ${NO_COST_LIMIT} runs it anyway`,
  );
}
