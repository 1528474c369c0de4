/**
 * A container that keeps failing (restartPolicy OnFailure), across signals: kube-state-metrics
 * counts the restarts and shows CrashLoopBackOff while the kubelet waits, dcgm-exporter shows
 * the held GPUs idle, and the kubelet's BackOff events fall inside the back-off windows.
 */
import { fileURLToPath } from "node:url";
import { GPU_MODELS, loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type LogRecordOut, type Sample, type TargetSamples, targetsKept } from "@gpusynth/constructs";
import type { DomainEvent } from "@gpusynth/sim";
import { beforeAll, describe, expect, it } from "vitest";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/crash-loop.yaml", import.meta.url));
const SECOND = 1_000;
const MINUTE = 60 * SECOND;

describe("a crash-looping training job, across signals", () => {
  const { blueprint } = loadBlueprint(scenario);
  const events: DomainEvent[] = [];
  const logs: LogRecordOut[] = [];
  const snapshots = new Map<number, TargetSamples[]>();

  beforeAll(() => {
    const run = new ClusterRun(blueprint, {
      logs: true,
      observers: [(e) => events.push(e)],
      sources: ["kube-state-metrics", "dcgm-exporter"],
    });
    drive(run, every(5 * SECOND, { toMs: 60 * MINUTE, atStart: true }), (frame) => {
      snapshots.set(frame.simulatedMs, targetsKept(frame.targets));
      logs.push(...frame.logs);
    });
  });

  const of = <K extends DomainEvent["kind"]>(kind: K) =>
    events.filter((e): e is DomainEvent & { kind: K } => e.kind === kind && "workload" in e && e.workload.name === "train-bad");
  const at = (t: number, name: string, pod: string): Sample[] =>
    (snapshots.get(Math.floor(t / (5 * SECOND)) * 5 * SECOND) ?? []).flatMap((target) =>
      target.samples.filter((s) => s.family.name === name && s.labels.pod === pod),
    );

  it("shows the container waiting and the pod not ready during each back-off, running and ready between, terminated at the end", () => {
    const crashes = of("ContainerCrashed");
    const pod = crashes[0]?.pods[0]?.name as string;
    const states = (t: number) =>
      ["ready", "running", "waiting", "terminated"].map((state) => at(t, `kube_pod_container_status_${state}`, pod)[0]?.value);
    const podReady = (t: number) => at(t, "kube_pod_status_ready", pod).find((s) => s.value === 1)?.labels.condition;
    for (const crash of crashes) {
      expect([states(crash.t + crash.backoffMs / 2), podReady(crash.t + crash.backoffMs / 2)]).toEqual([[0, 0, 1, 0], "false"]);
      expect([states(crash.t + crash.backoffMs + MINUTE), podReady(crash.t + crash.backoffMs + MINUTE)]).toEqual([[1, 1, 0, 0], "true"]);
    }
    const failed = of("WorkloadFailed")[0] as DomainEvent & { kind: "WorkloadFailed" };
    expect([states(failed.t + MINUTE), podReady(failed.t + MINUTE)]).toEqual([[0, 0, 0, 1], "false"]);
  });

  it("counts restarts and shows CrashLoopBackOff only while the kubelet waits", () => {
    const crashes = of("ContainerCrashed");
    const pod = crashes[0]?.pods[0]?.name as string;
    for (const crash of crashes) {
      const waiting = crash.t + crash.backoffMs / 2;
      expect(at(waiting, "kube_pod_container_status_restarts_total", pod).map((s) => s.value)).toEqual([crash.restarts]);
      expect(at(waiting, "kube_pod_container_status_waiting_reason", pod).map((s) => [s.labels.reason, s.value])).toEqual([
        ["CrashLoopBackOff", 1],
      ]);
      expect(at(waiting, "kube_pod_container_status_last_terminated_reason", pod).map((s) => s.labels.reason)).toEqual(["Error"]);
      const running = crash.t + crash.backoffMs + MINUTE;
      expect(at(running, "kube_pod_container_status_waiting_reason", pod)).toEqual([]);
      expect(at(running, "kube_pod_status_phase", pod).find((s) => s.value === 1)?.labels.phase).toBe("Running");
    }
    const failed = of("WorkloadFailed")[0] as DomainEvent & { kind: "WorkloadFailed" };
    expect(at(failed.t + MINUTE, "kube_pod_container_status_restarts_total", pod).map((s) => s.value)).toEqual([6]);
    expect(at(failed.t + MINUTE, "kube_pod_status_phase", pod).find((s) => s.value === 1)?.labels.phase).toBe("Failed");
  });

  it("shows the held GPUs without a process during a back-off, and held by one once the container runs again", () => {
    const crash = of("ContainerCrashed").at(-1) as DomainEvent & { kind: "ContainerCrashed" };
    const pod = crash.pods[0]?.name as string;
    const values = (t: number, name: string) => at(t, name, pod).map((s) => s.value);
    const model = GPU_MODELS[blueprint.nodePools[0]?.gpuModel as keyof typeof GPU_MODELS];
    // No process: nothing runs and the SM clock idles.
    expect(values(crash.t + 2 * MINUTE, "DCGM_FI_DEV_GPU_UTIL")).toEqual([0, 0, 0, 0]);
    expect(values(crash.t + 2 * MINUTE, "DCGM_FI_DEV_SM_CLOCK")).toEqual(Array(4).fill(model.smClockIdleMHz));
    // The restarted container holds a CUDA context (the clock at its maximum) while it initialises, until it fails again.
    const restart = of("ContainerRestarted")[0] as DomainEvent & { kind: "ContainerRestarted" };
    expect(values(restart.t + 30 * SECOND, "DCGM_FI_DEV_SM_CLOCK")).toEqual(Array(4).fill(model.smClockMaxMHz));
  });

  it("records the kubelet's BackOff events inside the back-off windows, naming the pod as format.Pod does", () => {
    const crashes = of("ContainerCrashed");
    const pod = crashes[0]?.pods[0] as { name: string; uid: string };
    const backOffs = logs.filter((r) => r.attributes["k8s.event.reason"] === "BackOff");
    expect(backOffs.length).toBeGreaterThanOrEqual(crashes.length);
    const start = blueprint.time.start;
    for (const record of backOffs) {
      expect(record.body).toBe(`Back-off restarting failed container train-bad in pod ${pod.name}_runai-vision(${pod.uid})`);
      expect(record.severityText).toBe("Warning");
      const t = record.timeMs - start;
      expect(crashes.some((c) => t >= Math.floor(c.t / 1000) * 1000 && t < c.t + c.backoffMs)).toBe(true);
    }
    // One Event object whose count grows with every write the spam filter lets through.
    const counts = backOffs.map((r) => r.attributes["k8s.event.count"] as number);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(new Set(backOffs.map((r) => r.attributes["k8s.event.name"])).size).toBe(1);
  });
});
