/**
 * A pipelined job keeps the GPUs it is pipelined onto until its victims have terminated: KAI's
 * allocate pipelines it onto the same releasing GPUs in every session until it binds, ahead of its
 * victims' new pods (docs/scheduling.md). A victim that terminates before the others must not start
 * again on the GPUs it left: a gang reclaiming two nodes would then find one of them taken when
 * the other is freed, and reclaim it again, cycle after cycle (enterprise.yaml's default seed did
 * so 19 times over two days for one pair of jobs).
 */
import type { DomainEvent } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";
import { DAY, fixture, repoFile, runKeeping } from "./helpers.js";

/** Every start of another workload's pod on a GPU a pipelined job holds, before its victims are gone. */
function startsOnPipelinedGpus(events: readonly DomainEvent[]): string[] {
  /** GPU UUID → the pipelined job holding it and until when. */
  const held = new Map<string, { job: string; until: number }>();
  const problems: string[] = [];
  for (const e of events) {
    if (e.kind === "WorkloadPipelined")
      for (const pod of e.pods) for (const gpu of pod.gpus ?? []) held.set(gpu.uuid, { job: e.workload.name, until: e.until });
    if (e.kind !== "WorkloadStarted") continue;
    for (const pod of e.pods)
      for (const gpu of pod.gpus ?? []) {
        const holder = held.get(gpu.uuid);
        if (holder === undefined || e.t >= holder.until) continue;
        if (holder.job === e.workload.name) held.delete(gpu.uuid);
        else problems.push(`${e.workload.name} started on ${gpu.uuid} at ${e.t}, pipelined for ${holder.job} until ${holder.until}`);
      }
  }
  return problems;
}

describe("a pipelined job's GPUs", () => {
  it.each([
    ["blueprints/enterprise.yaml", repoFile("blueprints/enterprise.yaml"), 2, undefined],
    ["the stress fixture at seed 43", fixture("stress.yaml"), 1, 43],
  ])("go to no other pod while its victims terminate (%s)", (_name, file, days, seed) => {
    const { events } = runKeeping(["WorkloadPipelined", "WorkloadStarted"], file, days * DAY, seed);
    expect(events.some((e) => e.kind === "WorkloadPipelined")).toBe(true);
    expect(startsOnPipelinedGpus(events).slice(0, 5)).toEqual([]);
  });
});
