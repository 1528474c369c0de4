/**
 * KAI-Scheduler's metrics tell the story its events tell: in preemption-storm, the reclaim wave
 * and the priority preemption are counted by action when they succeed (reclaim.go:86,
 * preempt.go:83-84 at v0.13.0), allocations likewise (allocate.go:64), and each action's
 * latency gauge moves on its own.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Sample } from "@gpusynth/constructs";
import type { DomainEvent } from "@gpusynth/sim";
import { beforeAll, describe, expect, it } from "vitest";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url));
const MINUTE = 60_000;

describe("KAI's counters and latencies through a preemption storm", () => {
  const { blueprint } = loadBlueprint(scenario);
  const cycles: (DomainEvent & { kind: "SchedulingCycle" })[] = [];
  const frames: { t: number; samples: Sample[] }[] = [];

  beforeAll(() => {
    const run = new ClusterRun(blueprint, { observers: [(e) => e.kind === "SchedulingCycle" && cycles.push(e)] });
    drive(run, every(15_000, { toMs: 90 * MINUTE, atStart: true }), (frame) => {
      frames.push({
        t: frame.simulatedMs,
        samples: frame.targets.flatMap((t) => t.samples).filter((s) => s.family.name.startsWith("kai_")),
      });
    });
  });

  const value = (frame: { samples: Sample[] }, name: string, labels: Record<string, string> = {}) =>
    frame.samples.find((s) => s.family.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

  it("counts pod groups scheduled by each action when the action succeeds, as the cycles did", () => {
    const last = frames.at(-1) as { t: number; samples: Sample[] };
    const succeeded = (action: "allocate" | "reclaim" | "preempt", outcome: string) =>
      cycles.filter((c) => c.t <= last.t).reduce((n, c) => n + c[action].filter((a) => a.outcome === outcome).length, 0);
    const reclaimed = succeeded("reclaim", "reclaimed");
    const preempted = succeeded("preempt", "preempted");
    expect(reclaimed).toBeGreaterThan(0);
    expect(preempted).toBeGreaterThan(0);
    expect(value(last, "kai_podgroups_scheduled_by_action", { action: "reclaim" })).toBe(reclaimed);
    expect(value(last, "kai_podgroups_scheduled_by_action", { action: "preempt" })).toBe(preempted);
    expect(value(last, "kai_total_preemption_attempts")).toBe(preempted);
    expect(value(last, "kai_podgroups_scheduled_by_action", { action: "allocate" })).toBe(succeeded("allocate", "allocated"));
  });

  it("moves each action's latency gauge on its own, frame to frame", () => {
    for (const action of ["allocate", "reclaim"]) {
      const values = frames.map((f) => value(f, "kai_action_scheduling_latency_milliseconds", { action }));
      expect(new Set(values).size, action).toBeGreaterThan(1);
    }
    const together = frames.filter(
      (f) =>
        value(f, "kai_action_scheduling_latency_milliseconds", { action: "reclaim" }) ===
        value(f, "kai_action_scheduling_latency_milliseconds", { action: "preempt" }),
    );
    expect(together.length).toBeLessThan(frames.length);
  });
});
