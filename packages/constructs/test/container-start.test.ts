/**
 * A pod is bound before its container runs: while the kubelet pulls the image (the storm's first
 * pods, on nodes without it) the container waits in ContainerCreating, the pod is not ready and its
 * GPUs do nothing; once the image is there it runs and the GPUs work. A later pod on the same
 * node finds the image present and starts at once. The kubelet's Pulled event comes when the
 * metrics say the container started.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, frameKept } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { allSamples } from "./family-index.js";

const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url)));
const SECOND = 1_000;

describe("a container's start after its image pull", () => {
  it("waits in ContainerCreating with idle GPUs until the image is pulled, then runs", () => {
    const run = new ClusterRun(blueprint, { logs: { events: true, scheduler: false } });
    const frames: Frame[] = [];
    drive(run, every(5 * SECOND, { toMs: 10 * 60 * SECOND }), (frame) => frames.push(frameKept(frame)));
    const values = (frame: Frame, family: string) => allSamples(frame.targets).filter((s) => s.family.name === family);
    const creating = (frame: Frame) =>
      new Set(
        values(frame, "kube_pod_container_status_waiting_reason")
          .filter((s) => s.labels.reason === "ContainerCreating")
          .map((s) => s.labels.pod),
      );
    const busy = (frame: Frame) =>
      new Set(
        values(frame, "DCGM_FI_DEV_GPU_UTIL")
          .filter((s) => s.value > 0)
          .map((s) => s.labels.pod),
      );
    const ready = (frame: Frame) =>
      new Set(
        values(frame, "kube_pod_status_ready")
          .filter((s) => s.labels.condition === "true" && s.value === 1)
          .map((s) => s.labels.pod),
      );

    const waited = frames.filter((f) => creating(f).size > 0);
    expect(waited.length).toBeGreaterThan(0);
    for (const frame of waited)
      for (const pod of creating(frame)) {
        expect(busy(frame).has(pod), pod).toBe(false);
        expect(ready(frame).has(pod), pod).toBe(false);
      }
    // Every pod that waited runs, busy and ready, within the pull time and a frame.
    const pod = [...creating(waited[0] as Frame)][0] as string;
    const started = frames.find((f) => f.simulatedMs > (waited[0] as Frame).simulatedMs && !creating(f).has(pod) && ready(f).has(pod));
    expect(started).toBeDefined();
    expect((started as Frame).simulatedMs - (waited[0] as Frame).simulatedMs).toBeLessThanOrEqual(31 * SECOND + 5 * SECOND);
    // The kubelet's events say the same: the pull ended when the container started.
    const pulled = frames
      .flatMap((f) => f.logs)
      .find((r) => r.attributes["k8s.event.reason"] === "Pulled" && String(r.body).startsWith("Successfully pulled"));
    expect(pulled).toBeDefined();
  });
});
