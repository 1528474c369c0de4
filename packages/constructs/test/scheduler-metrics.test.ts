/**
 * KAI-Scheduler's metrics tell the story its events tell: in preemption-storm, the reclaim wave
 * and the priority preemption are counted by action when they succeed (reclaim.go:86,
 * preempt.go:83-84 at v0.13.0), allocations and pipelinings likewise (allocate.go:64), the pod groups each
 * action tried agree with the scheduler's own log, idle cycles included, and each action's
 * latency gauge moves on its own.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type LogRecordOut, type Sample } from "@gpusynth/constructs";
import type { DomainEvent } from "@gpusynth/sim";
import { beforeAll, describe, expect, it } from "vitest";
import { allSamples } from "./family-index.js";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url));
const MINUTE = 60_000;

describe("KAI's counters and latencies through a preemption storm", () => {
  const { blueprint } = loadBlueprint(scenario);
  const cycles: (DomainEvent & { kind: "SchedulingCycle" })[] = [];
  const frames: { t: number; samples: Sample[] }[] = [];
  const schedulerLog: LogRecordOut[] = [];
  const END = 90 * MINUTE;

  beforeAll(() => {
    const run = new ClusterRun(blueprint, {
      logs: { events: false, scheduler: true },
      observers: [(e) => e.kind === "SchedulingCycle" && cycles.push(e)],
      sources: ["kai-scheduler"],
    });
    drive(run, every(15_000, { toMs: END, atStart: true }), (frame) => {
      schedulerLog.push(...frame.logs);
      frames.push({
        t: frame.simulatedMs,
        samples: allSamples(frame.targets).filter((s) => s.family.name.startsWith("kai_")),
      });
    });
    // The log writes a cycle once it has ended: a few seconds more hold every cycle up to the end.
    drive(run, every(5_000, { fromMs: END, toMs: END + 5_000 }), (frame) => schedulerLog.push(...frame.logs));
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
    // Allocate also counts a preemptor it pipelines onto its victims' releasing GPUs, every cycle
    // until they are gone, idle cycles included: as often as the log says so.
    const boundaryOf = (record: LogRecordOut) =>
      Math.floor((record.timeMs - blueprint.time.start) / blueprint.time.schedulingPeriod) * blueprint.time.schedulingPeriod;
    let boundary = Number.NaN;
    let allocated = 0;
    let pipelined = 0;
    for (const record of schedulerLog) {
      if (record.body.includes("Session ") && record.body.includes("framework/session.go")) boundary = boundaryOf(record);
      if (boundary > last.t) break;
      if (record.body.includes("Succesfully allocated resources for job")) allocated++;
      if (record.body.includes("Some tasks were pipelined, setting all job to be pipelined")) pipelined++;
    }
    expect(allocated).toBe(succeeded("allocate", "allocated"));
    expect(pipelined).toBeGreaterThan(0);
    expect(value(last, "kai_podgroups_scheduled_by_action", { action: "allocate" })).toBe(allocated + pipelined);
  });

  it("counts the pod groups each action tried as the scheduler's log shows them, every idle cycle included", () => {
    // Each cycle's lines follow its "Session" line, stamped within the period it started in.
    const period = blueprint.time.schedulingPeriod;
    const tried: { boundary: number; action: string }[] = [];
    let boundary = Number.NaN;
    for (const record of schedulerLog) {
      const offset = record.timeMs - blueprint.time.start;
      if (record.body.includes("framework/session.go") && record.body.includes("Session ")) boundary = Math.floor(offset / period) * period;
      const attempt = /Attempting to (consolidate|reclaim|preempt) /.exec(record.body);
      if (attempt !== null)
        tried.push({
          boundary,
          action: { consolidate: "consolidation", reclaim: "reclaim", preempt: "preempt" }[attempt[1] as string] as string,
        });
    }
    const idle = frames.filter((f) => !cycles.some((c) => c.t === f.t));
    expect(idle.length).toBeGreaterThan(0);
    let compared = 0;
    for (const frame of frames.filter((_, i) => i % 20 === 0 || i === frames.length - 1)) {
      for (const action of ["consolidation", "reclaim", "preempt"]) {
        const logged = tried.filter((a) => a.action === action && a.boundary <= frame.t).length;
        expect(value(frame, "kai_podgroups_acted_on_by_action", { action }) ?? 0, `${action} at ${frame.t / MINUTE} min`).toBe(logged);
        compared += logged;
      }
    }
    expect(compared).toBeGreaterThan(0);
    // Tried at least as often as it succeeded, and far more: a pending job is tried every second.
    const last = frames.at(-1) as { t: number; samples: Sample[] };
    const acted = value(last, "kai_podgroups_acted_on_by_action", { action: "preempt" }) ?? 0;
    expect(acted).toBeGreaterThan(10 * (value(last, "kai_podgroups_scheduled_by_action", { action: "preempt" }) ?? 0));
  });

  it("has no series for an action before it first counts, as a Prometheus CounterVec has none", () => {
    const first = frames[0] as { t: number; samples: Sample[] };
    const counted = first.samples.filter(
      (s) => s.family.name === "kai_podgroups_scheduled_by_action" || s.family.name === "kai_podgroups_acted_on_by_action",
    );
    for (const s of counted) expect(s.value, `${s.family.name}{action="${s.labels.action}"}`).toBeGreaterThan(0);
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
