/**
 * A node that runs out of host memory, across signals: kube-state-metrics shows MemoryPressure
 * on the node and the evicted pod Failed with reason Evicted; the kubelet's events say which
 * threshold was crossed and which container used the memory.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type LogRecordOut, type Sample, type TargetSamples, targetsKept } from "@gpusynth/constructs";
import type { DomainEvent } from "@gpusynth/sim";
import { beforeAll, describe, expect, it } from "vitest";
import { binaryQuantity } from "../src/kubernetes-events/events.js";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/memory-pressure.yaml", import.meta.url));
const MINUTE = 60_000;

describe("binaryQuantity", () => {
  it.each([
    [100 * 2 ** 20, "100Mi"],
    [41_208 * 1024, "41208Ki"],
    [2 * 2 ** 40, "2Ti"],
    [1000, "1000"],
    [0, "0"],
  ])("prints %d bytes as %s, like resource.Quantity", (bytes, text) => {
    expect(binaryQuantity(bytes)).toBe(text);
  });
});

describe("memory pressure on a node, across signals", () => {
  const { blueprint } = loadBlueprint(scenario);
  const events: DomainEvent[] = [];
  const logs: LogRecordOut[] = [];
  const snapshots = new Map<number, TargetSamples[]>();

  beforeAll(() => {
    const run = new ClusterRun(blueprint, { logs: true, observers: [(e) => events.push(e)], sources: ["kube-state-metrics"] });
    drive(run, every(MINUTE, { toMs: 90 * MINUTE, atStart: true }), (frame) => {
      snapshots.set(frame.simulatedMs, targetsKept(frame.targets));
      logs.push(...frame.logs);
    });
  });

  const pressure = () => events.find((e) => e.kind === "NodeMemoryPressure") as DomainEvent & { kind: "NodeMemoryPressure" };
  const at = (t: number, name: string, match: Record<string, string>): Sample[] =>
    (snapshots.get(t) ?? []).flatMap((target) =>
      target.samples.filter((s) => s.family.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)),
    );

  it("reports MemoryPressure on the node only between the eviction and the end of the transition period", () => {
    const { node, t } = pressure();
    const memoryPressure = (when: number) =>
      at(when, "kube_node_status_condition", { node, condition: "MemoryPressure" }).find((s) => s.value === 1)?.labels.status;
    expect([
      memoryPressure(t - MINUTE),
      memoryPressure(t + MINUTE),
      memoryPressure(t + 4 * MINUTE),
      memoryPressure(t + 6 * MINUTE),
    ]).toEqual(["false", "true", "true", "false"]);
  });

  it("shows the evicted pod Failed with status reason Evicted, and no other pod evicted", () => {
    const { victim, t } = pressure();
    const pod = victim?.pod.name as string;
    expect(at(t + MINUTE, "kube_pod_status_phase", { pod }).find((s) => s.value === 1)?.labels.phase).toBe("Failed");
    const evicted = at(t + MINUTE, "kube_pod_status_reason", { reason: "Evicted" }).filter((s) => s.value === 1);
    expect(evicted.map((s) => s.labels.pod)).toEqual([pod]);
    // Every one of the users' three pods has the series (the system's pods too, at 0).
    expect(
      at(t + MINUTE, "kube_pod_status_reason", { reason: "Evicted" }).filter((s) => s.labels.namespace?.startsWith("runai-")).length,
    ).toBe(3);
  });

  it("records the threshold, the available memory, the container's use and its request (Run:ai's 100Mi per GPU) in the Evicted event", () => {
    const { victim, availableBytes, t } = pressure();
    const evicted = logs.filter((r) => r.attributes["k8s.event.reason"] === "Evicted");
    expect(evicted.map((r) => [r.resource["k8s.object.name"], r.timeMs - blueprint.time.start, r.severityText])).toEqual([
      [victim?.pod.name, t, "Warning"],
    ]);
    expect(evicted[0]?.body).toBe(
      `The node was low on resource: memory. Threshold quantity: 100Mi, available: ${availableBytes / 1024}Ki. Container ${victim?.workload.name} was using ${(victim?.usageBytes as number) / 1024}Ki, request is ${100 * (victim?.pod.gpus.length as number)}Mi, has larger consumption of memory. `,
    );
    const nodeEvents = logs.filter((r) => r.resource["k8s.object.kind"] === "Node").map((r) => r.attributes["k8s.event.reason"]);
    expect(nodeEvents).toEqual(["EvictionThresholdMet", "NodeHasInsufficientMemory", "NodeHasSufficientMemory"]);
  });
});
