/**
 * kube-state-metrics' own metrics, as kube-prometheus' kube-state-metrics alerts read them: every
 * resource listed once and watched again every 5 to 10 minutes (client-go's reflector), no list
 * or watch error, one unsharded instance; the counters start over when its node reboots.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, type Sample } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { KsmSelfMetrics, Reflector, WATCHED_RESOURCES } from "../src/kube-state-metrics/self-metrics.js";
import { systemPodOf } from "../src/system-workloads.js";

const MINUTE = 60_000;

describe("the reflector's watches", () => {
  // Started with the run, and 90 days before it (a system pod installed with the cluster).
  it.each([0, 90 * 24 * 60])(
    "start one by one, every 5 to 10 minutes, whenever they are counted (started %i minutes before the run)",
    (minutesBefore) => {
      const runStart = minutesBefore * MINUTE;
      const reflector = new Reflector("*v1.Pod", -runStart);
      // Asked out of order first: the count does not depend on who asked before.
      const later = reflector.watchesBy(runStart + 12 * 60 * MINUTE);
      let previous = reflector.watchesBy(runStart);
      // One watch at its start, and one every 7.5 minutes on average since: 17,280 in 90 days, give
      // or take a renewal count's spread (a standard deviation of 25 there).
      const expected = 1 + runStart / (7.5 * MINUTE);
      expect(Math.abs(previous - expected)).toBeLessThanOrEqual(minutesBefore === 0 ? 0 : 3 * 25);
      const atStart = previous;
      const gaps: number[] = [];
      const steps = new Set<number>();
      let lastChange = 0;
      for (let t = runStart + 5_000; t <= runStart + 24 * 60 * MINUTE; t += 5_000) {
        const now = reflector.watchesBy(t);
        steps.add(now - previous);
        if (now > previous) {
          if (lastChange > 0) gaps.push(t - lastChange);
          lastChange = t;
        }
        previous = now;
      }
      // One watch at a time, never fewer.
      expect([...steps].sort()).toEqual([0, 1]);
      // Read every 5 s: a gap is seen to within 5 s.
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(5 * MINUTE - 5_000);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(10 * MINUTE + 5_000);
      expect(reflector.watchesBy(runStart + 12 * 60 * MINUTE)).toBe(later);
      // 24 hours at 7.5 minutes a watch on average.
      expect(previous - atStart).toBeGreaterThan(180);
      expect(previous - atStart).toBeLessThan(205);
    },
  );
});

describe("kube-state-metrics' telemetry target through a node reboot (gpu-fault.yaml)", () => {
  const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/scenarios/gpu-fault.yaml", import.meta.url)));
  const frames: Frame[] = [];
  drive(new ClusterRun(blueprint, { sources: ["kube-state-metrics"] }), every(MINUTE, { toMs: 5 * 60 * MINUTE, atStart: true }), (f) =>
    frames.push(f),
  );
  const self = (frame: Frame): Sample[] => [
    ...(frame.targets.find((t) => t.target.job === "kube-state-metrics" && t.target.port === 8081)?.samples ?? []),
  ];

  it("serves every resource's list and watch counts, no error, and one shard of one", () => {
    const last = frames.at(-1) as Frame;
    const samples = self(last);
    const of = (name: string) => samples.filter((s) => s.family.name === name);
    expect(of("kube_state_metrics_list_total").map((s) => [s.labels.resource, s.labels.result, s.value])).toEqual(
      WATCHED_RESOURCES.map((r) => [r, "success", 1]),
    );
    expect(of("kube_state_metrics_watch_total").every((s) => s.labels.result === "success" && s.value > 1)).toBe(true);
    expect(of("kube_state_metrics_shard_ordinal").map((s) => [s.labels.shard_ordinal, s.value])).toEqual([["0", 0]]);
    expect(of("kube_state_metrics_total_shards").map((s) => s.value)).toEqual([1]);
  });

  it("counts its watches only up while it runs", () => {
    const watches = (frame: Frame) =>
      self(frame)
        .filter((s) => s.family.name === "kube_state_metrics_watch_total")
        .reduce((n, s) => n + s.value, 0);
    for (let i = 1; i < frames.length; i++) expect(watches(frames[i] as Frame)).toBeGreaterThanOrEqual(watches(frames[i - 1] as Frame));
  });

  it("starts its counters over when its node comes back from a reboot", () => {
    const pod = systemPodOf(blueprint, "kube-state-metrics");
    const metrics = new KsmSelfMetrics(pod);
    const watched = (t: number) =>
      metrics
        .collect(t)
        .samples()
        .filter((s) => s.family.name === "kube_state_metrics_watch_total")
        .reduce((n, s) => n + s.value, 0);
    const before = watched(60 * MINUTE);
    expect(before).toBeGreaterThan(1000);
    metrics.record({ t: 61 * MINUTE, kind: "NodeReady", node: pod.node });
    // Listed and watched once per resource at its start again; 8 minutes later at most one more each.
    expect(watched(61 * MINUTE)).toBe(WATCHED_RESOURCES.length);
    expect(watched(69 * MINUTE)).toBeLessThanOrEqual(2 * WATCHED_RESOURCES.length);
    expect(watched(69 * MINUTE)).toBeGreaterThan(WATCHED_RESOURCES.length);
  });
});
