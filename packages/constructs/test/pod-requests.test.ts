/**
 * The CPU and memory a pod requests, as kube-state-metrics shows them: Run:ai's limitRange
 * defaults per GPU (100 millicores, 100 MiB) unless the workload kind asks for its own, no CPU or
 * memory limit, and the GPU limit an extended resource must carry. A request that cannot fit a
 * GPU's share of a node is refused with the blueprint path that asked for it.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BlueprintError, type BlueprintProblem, parseBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, type Sample } from "@gpusynth/constructs";
import { simulatedMs } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { allSamples } from "./family-index.js";

const labText = readFileSync(fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url)), "utf8");
const DAY = 86_400_000;
const GiB = 2 ** 30;

/**
 * lab.yaml with no kind asking for CPU or memory (so Run:ai's defaults apply), then its interactive
 * kind edited (lab's generators share one mix).
 */
function lab(interactive: Record<string, number> = {}): string {
  const doc = parseDocument(labText);
  const mix = (doc.toJS() as { workloads: Array<{ mix: Array<{ type: string }> }> }).workloads[0]?.mix ?? [];
  mix.forEach((_kind, k) => {
    doc.deleteIn(["workloads", 0, "mix", k, "cpuPerGpu"]);
    doc.deleteIn(["workloads", 0, "mix", k, "memoryGiBPerGpu"]);
  });
  const k = mix.findIndex((kind) => kind.type === "interactive");
  for (const [key, value] of Object.entries(interactive)) doc.setIn(["workloads", 0, "mix", k, key], value);
  return doc.toString();
}

/** Every pod's requests and limits after a simulated day, keyed by pod, with its workload name. */
function podResources(text: string) {
  const { blueprint } = parseBlueprint(text, "edited-lab.yaml");
  const samples: Sample[] = [];
  drive(new ClusterRun(blueprint, { seed: 5 }), [simulatedMs(DAY)], (frame) => samples.push(...allSamples(frame.targets)));
  const pods = new Map<string, { requests: Record<string, number>; limits: Record<string, number> }>();
  for (const s of samples) {
    const kind =
      s.family.name === "kube_pod_container_resource_requests"
        ? "requests"
        : s.family.name === "kube_pod_container_resource_limits"
          ? "limits"
          : undefined;
    // The users' pods, in their projects' namespaces (not the system's).
    if (kind === undefined || s.labels.namespace?.startsWith("runai-") !== true) continue;
    const pod = s.labels.pod as string;
    const entry = pods.get(pod) ?? { requests: {}, limits: {} };
    entry[kind][`${s.labels.resource}/${s.labels.unit}`] = s.value;
    pods.set(pod, entry);
  }
  return pods;
}

describe("pod CPU and memory requests", () => {
  it("are Run:ai's limitRange defaults per GPU where the blueprint asks for none, with only the GPU as a limit", () => {
    const pods = podResources(lab());
    expect(pods.size).toBeGreaterThan(3);
    for (const [pod, { requests, limits }] of pods) {
      const gpus = requests["nvidia_com_gpu/integer"] as number;
      expect(gpus, pod).toBeGreaterThan(0);
      expect(requests["cpu/core"], pod).toBeCloseTo(0.1 * gpus, 9);
      expect(requests["memory/byte"], pod).toBe(100 * 2 ** 20 * gpus);
      expect(limits, pod).toEqual({ "nvidia_com_gpu/integer": gpus });
    }
  });

  it("follow a workload kind's cpuPerGpu and memoryGiBPerGpu, and leave the other kinds on the defaults", () => {
    // Interactive sessions run for hours: some are up at the end of the day.
    const pods = podResources(lab({ cpuPerGpu: 12, memoryGiBPerGpu: 200 }));
    const sized = [...pods.values()].filter(
      (p) => p.requests["memory/byte"] === 200 * GiB * (p.requests["nvidia_com_gpu/integer"] as number),
    );
    expect(sized.length).toBeGreaterThan(0);
    for (const { requests } of sized) expect(requests["cpu/core"]).toBe(12 * (requests["nvidia_com_gpu/integer"] as number));
    expect(sized.length).toBeLessThan(pods.size);
  });

  it("are refused when they cannot fit a GPU's share of a node, naming the path, the bound and the value", () => {
    // lab's DGX A100 nodes: 256 CPUs (128 cores, 2 threads each) and 2048 GiB for 8 GPUs, so 32
    // CPUs and 256 GiB a GPU.
    let problems: readonly BlueprintProblem[] = [];
    try {
      parseBlueprint(lab({ cpuPerGpu: 40, memoryGiBPerGpu: 300 }), "edited-lab.yaml");
    } catch (error) {
      if (!(error instanceof BlueprintError)) throw error;
      problems = error.problems;
    }
    // One pair per generator: lab's four generators share the edited kind.
    const text = problems.map((p) => `${p.path.join(".")}: expected ${p.expected}, found ${p.found}`);
    expect(text).toHaveLength(8);
    for (const line of text)
      expect(line).toMatch(
        /^workloads\.\d\.mix\.\d+\.(cpuPerGpu: expected at most 32 CPU cores per GPU, .*node pool "\w+".*, found 40|memoryGiBPerGpu: expected at most 252 GiB of memory per GPU, .*, found 300)$/,
      );
  });
});
