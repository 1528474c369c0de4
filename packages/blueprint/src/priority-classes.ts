/**
 * Priority classes a workload generator may name. Run:ai decides preemptibility from the
 * value: below 100 a workload is preemptible and may run over its project's deserved quota;
 * 100 and above it is non-preemptible and limited to the deserved quota.
 *
 * Sources:
 * - Run:ai preset PriorityClasses `train` 50, `interactive-preemptible` 75, `build` 100,
 *   `inference` 125 — Run:ai docs "Scheduling" (run-ai/docs
 *   docs/Researcher/scheduling/the-runai-scheduler.md, commit not pinned) and NVIDIA Run:ai
 *   "Workload priority class control" (https://run-ai-docs.nvidia.com/saas/platform-management/
 *   runai-scheduler/scheduling/workload-priority-class-control).
 * - KAI-Scheduler chart presets name the 75 class `build-preemptible` (NVIDIA/KAI-Scheduler
 *   v0.17.0 @f218c69 deployments/kai-scheduler/templates/priorityclasses/).
 * - The ≥ 100 rule: KAI-Scheduler v0.17.0 docs/priority/README.md "Preemptibility".
 * A blueprint may add its own classes (e.g. the newer NVIDIA Run:ai dictionary).
 */

export interface PriorityClass {
  readonly name: string;
  readonly value: number;
}

export const BUILT_IN_PRIORITY_CLASSES: readonly PriorityClass[] = [
  { name: "train", value: 50 },
  { name: "build-preemptible", value: 75 },
  { name: "interactive-preemptible", value: 75 },
  { name: "build", value: 100 },
  { name: "inference", value: 125 },
];

/** Run:ai / KAI: PriorityClass value ≥ 100 means non-preemptible. */
export const NON_PREEMPTIBLE_MIN_PRIORITY = 100;

export function isPreemptible(priority: number): boolean {
  return priority < NON_PREEMPTIBLE_MIN_PRIORITY;
}
