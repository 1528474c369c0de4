/**
 * kube_pod_container_info through crash-loop.yaml's story: a series per bound pod with the image
 * its type runs by default, the image's digest, and a containerd ID that changes with every
 * restart of the container; no series for a pod the scheduler has not bound.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Sample } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { allSamples } from "./family-index.js";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/crash-loop.yaml", import.meta.url));
const MINUTE = 60_000;

describe("kube_pod_container_info (crash-loop.yaml)", () => {
  const { blueprint } = loadBlueprint(scenario);
  const scrapes: Sample[][] = [];
  drive(new ClusterRun(blueprint, { sources: ["kube-state-metrics"] }), every(30_000, { fromMs: 30_000, toMs: 45 * MINUTE }), (frame) =>
    scrapes.push(allSamples(frame.targets)),
  );
  // The users' pods, in their projects' namespaces (the system's pods have their own images).
  const users = (s: Sample) => s.labels.namespace?.startsWith("runai-") === true;
  const info = (samples: Sample[]) => samples.filter((s) => s.family.name === "kube_pod_container_info" && users(s));
  const trainingImage = blueprint.images.find((i) => i.defaultFor.includes("training"))?.name;

  it("shows every bound pod's container with its type's default image, its digest and a containerd ID", () => {
    const all = scrapes.flatMap(info);
    expect(all.length).toBeGreaterThan(0);
    for (const s of all) {
      expect(s.labels.image_spec).toBe(trainingImage);
      expect(s.labels.image).toBe(trainingImage);
      expect(s.labels.image_id).toMatch(/^nvcr\.io\/nvidia\/pytorch@sha256:[0-9a-f]{64}$/);
      expect(s.labels.container_id).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
      expect(s.value).toBe(1);
    }
    // Exactly the pods kube-state-metrics lists with a container status (restart counts).
    for (const samples of scrapes) {
      const withStatus = samples
        .filter((s) => s.family.name === "kube_pod_container_status_restarts_total" && users(s))
        .map((s) => s.labels.pod);
      expect(info(samples).map((s) => s.labels.pod)).toEqual(withStatus);
    }
  });

  it("gives the container a new ID with every restart, and keeps the image's digest", () => {
    const restarted = new Map<string, Set<string>>();
    const digests = new Set<string>();
    for (const samples of scrapes)
      for (const s of info(samples)) {
        const ids = restarted.get(s.labels.pod as string) ?? new Set<string>();
        ids.add(s.labels.container_id as string);
        restarted.set(s.labels.pod as string, ids);
        digests.add(s.labels.image_id as string);
      }
    const restarts = Math.max(
      ...scrapes.flatMap((samples) =>
        samples.filter((s) => s.family.name === "kube_pod_container_status_restarts_total" && users(s)).map((s) => s.value),
      ),
    );
    expect(restarts).toBeGreaterThan(1);
    expect(Math.max(...[...restarted.values()].map((ids) => ids.size))).toBe(restarts + 1);
    expect(digests.size).toBe(1);
  });
});
