/**
 * Warnings (never errors) for rates far outside what published GPU clusters show, so a typo
 * like perDay: 5000 or a hazard rate in per-hour units is caught before it shapes a run. The
 * ranges are those of the published traces and papers named below (section labels as in the
 * header of blueprints/lab.yaml); a blueprint may still use such rates on purpose, e.g. to
 * stress a pipeline.
 */
import type { BlueprintProblem } from "./problems.js";
import type { Blueprint } from "./schema.js";

/** Helios, PAI, Acme and Meta RSC span 0.5–2.5 GPU workloads per GPU per day (§1b). */
const MAX_WORKLOADS_PER_GPU_DAY = 10;
/** Llama 3: 4.7e-4 unexpected interruptions per GPU-day (Table 5, §5a). */
const LLAMA3_INTERRUPTIONS_PER_GPU_DAY = 4.7e-4;
const MAX_HAZARD_FACTOR = 100;

export function plausibilityWarnings(bp: Blueprint): BlueprintProblem[] {
  const warnings: BlueprintProblem[] = [];
  const gpus = bp.nodePools.reduce((sum, p) => sum + p.nodes * p.gpusPerNode, 0);
  const perDay = bp.workloads.reduce((sum, g) => sum + g.arrivals.perDay, 0);
  if (gpus > 0 && perDay / gpus > MAX_WORKLOADS_PER_GPU_DAY) {
    warnings.push({
      severity: "warning",
      path: ["workloads"],
      expected: `at most ${MAX_WORKLOADS_PER_GPU_DAY} GPU workloads per GPU per day in all (published clusters: 0.5–2.5, Helios, PAI, Acme, Meta RSC)`,
      found: `${Number((perDay / gpus).toPrecision(3))} per GPU per day (${perDay} a day on ${gpus} GPUs)`,
    });
  }
  const hazard = bp.faults.hazards.reduce((sum, h) => sum + h.perGpuDay, 0);
  if (hazard > MAX_HAZARD_FACTOR * LLAMA3_INTERRUPTIONS_PER_GPU_DAY) {
    warnings.push({
      severity: "warning",
      path: ["faults", "hazards"],
      expected: `hardware interruptions below ${MAX_HAZARD_FACTOR}× Llama 3's ${LLAMA3_INTERRUPTIONS_PER_GPU_DAY} per GPU-day in all (perGpuDay is per day, not per hour)`,
      found: `${Number(hazard.toPrecision(3))} per GPU-day (${Math.round(hazard / LLAMA3_INTERRUPTIONS_PER_GPU_DAY)}× Llama 3)`,
    });
  }
  return warnings;
}
