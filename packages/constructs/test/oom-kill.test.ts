/**
 * A container that runs out of memory, as a platform team finds it (oom-kill.yaml): its working
 * set climbs to the memory limit kube-state-metrics and cAdvisor both report, the kernel kills it
 * there, kube-state-metrics says OOMKilled as its last termination while the kubelet restarts it
 * and as its termination once the backoffLimit is spent; its neighbour without a limit is untouched.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, frameKept, type Sample } from "@gpusynth/constructs";
import type { DomainEvent } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";
import { allSamples, familyIndex } from "./family-index.js";

const MINUTE = 60_000;
const GIB = 2 ** 30;
const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/scenarios/oom-kill.yaml", import.meta.url)));

describe("a training job killed at its memory limit (oom-kill.yaml)", () => {
  const frames: Frame[] = [];
  const events: DomainEvent[] = [];
  drive(
    new ClusterRun(blueprint, { observers: [(e) => events.push(e)], sources: ["kubelet", "kube-state-metrics", "node-exporter"] }),
    every(15_000, { toMs: 80 * MINUTE, atStart: true }),
    (f) => frames.push(frameKept(f)),
  );
  /** Each frame's samples by family, indexed once: the checks read several families of every frame. */
  const familyIn = familyIndex((frame: Frame) => frame.targets.map((t) => t.samples));
  const of = (frame: Frame, name: string, pod: string, container = true): Sample[] =>
    familyIn(frame, name).filter((s) => s.labels.pod === pod && (s.labels.container !== undefined) === container);
  const value = (frame: Frame, name: string, pod: string) => of(frame, name, pod)[0]?.value;
  const leaky = "train-leaky-0-0";

  it("is killed four times, each when the kubelet's restart has run its course, and then fails OOMKilled", () => {
    const crashes = events.filter((e) => e.kind === "ContainerCrashed" && e.workload.name === "train-leaky");
    expect(crashes.map((e) => (e.kind === "ContainerCrashed" ? e.reason : undefined))).toEqual(["OOMKilled", "OOMKilled", "OOMKilled"]);
    const failed = events.find((e) => e.kind === "WorkloadFailed" && e.workload.name === "train-leaky");
    expect(failed?.kind === "WorkloadFailed" && failed.cause).toEqual({ kind: "BackoffLimitExceeded", restarts: 3 });
  });

  it("shows its working set climbing to the limit both kube-state-metrics and cAdvisor report, and no further", () => {
    const running = frames.filter((f) => value(f, "container_memory_working_set_bytes", leaky) !== undefined);
    expect(running.length).toBeGreaterThan(100);
    let highest = 0;
    for (const frame of running) {
      const limit = value(frame, "container_spec_memory_limit_bytes", leaky) as number;
      expect(limit).toBe(96 * GIB);
      const ksm = allSamples(frame.targets).find(
        (s) => s.family.name === "kube_pod_container_resource_limits" && s.labels.pod === leaky && s.labels.resource === "memory",
      );
      expect(ksm?.value).toBe(limit);
      const share = (value(frame, "container_memory_working_set_bytes", leaky) as number) / limit;
      expect(share).toBeLessThanOrEqual(1);
      highest = Math.max(highest, share);
    }
    // The last scrape before a kill, 15 s before it, sees it within 2 % of the limit.
    expect(highest).toBeGreaterThan(0.98);
    // The neighbour without a limit: cAdvisor's "unlimited", and nothing near its node's memory.
    const last = frames.at(-1) as Frame;
    expect(value(last, "container_spec_memory_limit_bytes", "train-ok-0-0")).toBe(0);
    expect(value(last, "container_memory_working_set_bytes", "train-ok-0-0") as number).toBeLessThan(64 * GIB);
  });

  it("says OOMKilled as the last termination while it restarts, and as the termination once it failed", () => {
    const reasons = (frame: Frame, name: string) =>
      allSamples(frame.targets)
        .filter((s) => s.family.name === name && s.labels.pod === leaky && s.value === 1)
        .map((s) => s.labels.reason);
    const restarting = frames.filter((f) => f.simulatedMs > 21 * MINUTE && f.simulatedMs < 60 * MINUTE);
    for (const frame of restarting) expect(reasons(frame, "kube_pod_container_status_last_terminated_reason")).toEqual(["OOMKilled"]);
    const last = frames.at(-1) as Frame;
    expect(reasons(last, "kube_pod_container_status_terminated_reason")).toEqual(["OOMKilled"]);
    const restarts = allSamples(last.targets).find(
      (s) => s.family.name === "kube_pod_container_status_restarts_total" && s.labels.pod === leaky,
    );
    expect(restarts?.value).toBe(3);
  });

  it("counts each kill in the node's kernel (node_vmstat_oom_kill), at the scrape after it", () => {
    const kills = (frame: Frame) => allSamples(frame.targets).find((s) => s.family.name === "node_vmstat_oom_kill")?.value as number;
    // The container's deaths: three restarts and the last, each at its memory limit.
    const deaths = events.filter(
      (e) => (e.kind === "ContainerCrashed" || e.kind === "WorkloadFailed") && e.workload.name === "train-leaky",
    );
    expect(deaths).toHaveLength(4);
    for (const death of deaths) {
      const before = frames.filter((f) => f.simulatedMs < death.t).at(-1) as Frame;
      const after = frames.find((f) => f.simulatedMs >= death.t) as Frame;
      expect(kills(after) - kills(before)).toBe(1);
    }
    expect(kills(frames.at(-1) as Frame)).toBe(4);
    expect(kills(frames[0] as Frame)).toBe(0);
  });
});
