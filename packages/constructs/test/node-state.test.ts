/**
 * What kube-state-metrics shows of a node through gpu-fault.yaml's story: GPU allocatable as the
 * device plugin advertises it (an XID it acts on drops the GPU until the node reboots, a driver
 * reset does not bring it back), and the cordon, the reboot and the return as spec.unschedulable
 * and the node lifecycle controller's taints; the row XID 63 marked for remapping stays counted.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadBlueprint, parseBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, type Sample } from "@gpusynth/constructs";
import { simulatedMs } from "@gpusynth/sim";
import { beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { allSamples } from "./family-index.js";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/gpu-fault.yaml", import.meta.url));
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe("a node through faults, a cordon and a reboot (gpu-fault.yaml)", () => {
  const at = new Map<number, Sample[]>();
  const moments = [20 * MINUTE, 40 * MINUTE, HOUR + 10 * MINUTE, 3 * HOUR + 10 * MINUTE, 3.5 * HOUR + 5 * MINUTE, 4 * HOUR];

  beforeAll(() => {
    const { blueprint } = loadBlueprint(scenario);
    // A schedule is any instants in order: here, the story's moments.
    drive(new ClusterRun(blueprint), moments.map(simulatedMs), (frame) => at.set(frame.simulatedMs, allSamples(frame.targets)));
  });

  it("keeps the kubelet's hard eviction threshold (100Mi) of memory back from allocatable, and reserves nothing else", () => {
    const samples = at.get(20 * MINUTE) ?? [];
    const of = (family: string, resource: string) =>
      new Map(samples.filter((s) => s.family.name === family && s.labels.resource === resource).map((s) => [s.labels.node, s.value]));
    const capacity = of("kube_node_status_capacity", "memory");
    const allocatable = of("kube_node_status_allocatable", "memory");
    expect(capacity.size).toBeGreaterThan(0);
    for (const [node, bytes] of capacity) expect(allocatable.get(node), node).toBe(bytes - 100 * 2 ** 20);
    expect(of("kube_node_status_allocatable", "cpu")).toEqual(of("kube_node_status_capacity", "cpu"));
  });

  const gpusAllocatable = (t: number, node: string) =>
    at
      .get(t)
      ?.find((s) => s.family.name === "kube_node_status_allocatable" && s.labels.node === node && s.labels.resource === "nvidia_com_gpu")
      ?.value;
  const unschedulable = (t: number, node: string) =>
    at.get(t)?.find((s) => s.family.name === "kube_node_spec_unschedulable" && s.labels.node === node)?.value;
  const taints = (t: number, node: string) =>
    (at.get(t) ?? [])
      .filter((s) => s.family.name === "kube_node_spec_taint" && s.labels.node === node)
      .map((s) => `${s.labels.key}:${s.labels.effect}`)
      .sort();

  it("counts the GPUs the device plugin advertises: XID 63 and XID 95 each drop one for good", () => {
    expect([gpusAllocatable(20 * MINUTE, "train-node-0"), gpusAllocatable(40 * MINUTE, "train-node-0")]).toEqual([8, 7]);
    // XID 95 at 01:00: the driver resets the GPU by 01:05, the device plugin keeps it out.
    expect(gpusAllocatable(HOUR + 10 * MINUTE, "train-node-1")).toBe(7);
    expect(gpusAllocatable(4 * HOUR, "train-node-1")).toBe(7);
  });

  it("counts the row XID 63 marked for remapping on that GPU alone, before and after the node's reboot", () => {
    const remapped = (t: number) =>
      (at.get(t) ?? [])
        .filter((s) => s.family.name === "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS" && s.value > 0)
        .map((s) => `${s.labels.Hostname}/${s.labels.gpu}=${s.value}`);
    expect(remapped(20 * MINUTE)).toEqual([]);
    expect(remapped(40 * MINUTE)).toEqual(["train-node-0/5=1"]);
    expect(remapped(4 * HOUR)).toEqual(["train-node-0/5=1"]);
    const failed = (at.get(4 * HOUR) ?? []).filter((s) => s.family.name === "DCGM_FI_DEV_ROW_REMAP_FAILURE" && s.value !== 0);
    expect(failed).toEqual([]); // no XID 64 in this story
  });

  it("keeps the last posted allocatable through the reboot, and all eight once the node is back", () => {
    expect(gpusAllocatable(3 * HOUR + 10 * MINUTE, "train-node-0")).toBe(6); // XID 63 and XID 79
    expect(gpusAllocatable(3.5 * HOUR + 5 * MINUTE, "train-node-0")).toBe(6);
    expect(gpusAllocatable(4 * HOUR, "train-node-0")).toBe(8);
  });

  it("shows the cordon, the unreachable kubelet and the return as spec and taints", () => {
    expect([unschedulable(HOUR + 10 * MINUTE, "train-node-0"), taints(HOUR + 10 * MINUTE, "train-node-0")]).toEqual([0, []]);
    expect([unschedulable(3 * HOUR + 10 * MINUTE, "train-node-0"), taints(3 * HOUR + 10 * MINUTE, "train-node-0")]).toEqual([
      1,
      ["node.kubernetes.io/unschedulable:NoSchedule"],
    ]);
    expect(taints(3.5 * HOUR + 5 * MINUTE, "train-node-0")).toEqual([
      "node.kubernetes.io/unreachable:NoExecute",
      "node.kubernetes.io/unreachable:NoSchedule",
      "node.kubernetes.io/unschedulable:NoSchedule",
    ]);
    expect([unschedulable(4 * HOUR, "train-node-0"), taints(4 * HOUR, "train-node-0")]).toEqual([0, []]);
    expect(unschedulable(3 * HOUR + 10 * MINUTE, "train-node-1")).toBe(0);
  });
});

describe("DP_DISABLE_HEALTHCHECKS (faults.devicePluginDisableHealthchecks) on the same story", () => {
  const allocatableAfterFaults = (setting: string) => {
    const doc = parseDocument(readFileSync(scenario, "utf8"));
    doc.setIn(["faults", "devicePluginDisableHealthchecks"], setting);
    const { blueprint } = parseBlueprint(doc.toString(), "gpu-fault-edited.yaml");
    const samples: Sample[] = [];
    drive(new ClusterRun(blueprint), [simulatedMs(HOUR + 10 * MINUTE)], (frame) => samples.push(...allSamples(frame.targets)));
    return samples
      .filter((s) => s.family.name === "kube_node_status_allocatable" && s.labels.resource === "nvidia_com_gpu")
      .map((s) => `${s.labels.node}=${s.value}`)
      .sort();
  };

  it("keeps a GPU allocatable after an XID the list names, and after every XID with all", () => {
    // Unset: XID 63 on node 0 and XID 95 on node 1 each cost a GPU.
    expect(allocatableAfterFaults("")).toEqual(["train-node-0=7", "train-node-1=7"]);
    expect(allocatableAfterFaults("63")).toEqual(["train-node-0=8", "train-node-1=7"]);
    expect(allocatableAfterFaults("63, 95")).toEqual(["train-node-0=8", "train-node-1=8"]);
    expect(allocatableAfterFaults("all")).toEqual(["train-node-0=8", "train-node-1=8"]);
  });

  it("refuses a value the device plugin's forms do not allow, naming the path", () => {
    const doc = parseDocument(readFileSync(scenario, "utf8"));
    doc.setIn(["faults", "devicePluginDisableHealthchecks"], "63;95");
    expect(() => parseBlueprint(doc.toString(), "gpu-fault-edited.yaml")).toThrow(/faults\.devicePluginDisableHealthchecks/);
  });
});

describe("each node's roles (node-role.kubernetes.io/<role> labels)", () => {
  /** kube_node_role's series by node, one frame in, of kube-state-metrics' shard of `file` edited by `edit`. */
  const rolesOf = (file: string, edit: (doc: ReturnType<typeof parseDocument>) => void = () => {}) => {
    const doc = parseDocument(readFileSync(fileURLToPath(new URL(`../../../${file}`, import.meta.url)), "utf8"));
    edit(doc);
    const { blueprint } = parseBlueprint(doc.toString(), file);
    const nodes = blueprint.nodePools.reduce((sum, pool) => sum + pool.nodes, 0);
    const roles = new Map<string, string[]>();
    drive(new ClusterRun(blueprint, { shard: { index: 1, count: nodes + 1 } }), [simulatedMs(MINUTE)], (frame) => {
      for (const s of allSamples(frame.targets))
        if (s.family.name === "kube_node_role")
          roles.set(s.labels.node as string, [...(roles.get(s.labels.node as string) ?? []), `${s.labels.role}=${s.value}`]);
    });
    return { roles, nodes };
  };

  it("lists Run:ai's GPU worker role on every node of enterprise.yaml's pools", () => {
    const { roles, nodes } = rolesOf("blueprints/enterprise.yaml");
    expect(roles.size).toBe(nodes);
    expect(new Set([...roles.values()].map((r) => r.join()))).toEqual(new Set(["runai-gpu-worker=1"]));
  });

  it("lists every role a pool's nodes carry, and none where the blueprint gives none", () => {
    const { roles } = rolesOf("blueprints/lab.yaml", (d) => d.setIn(["nodePools", 0, "nodeRoles"], ["runai-gpu-worker", "runai-system"]));
    expect(new Set([...roles.values()].map((r) => r.join()))).toEqual(new Set(["runai-gpu-worker=1,runai-system=1"]));
    expect(rolesOf("blueprints/lab.yaml").roles.size).toBe(0);
  });
});

describe("what each node pool's nodes run (enterprise.yaml)", () => {
  it("reports each pool's kubelet, kernel, OS image and runtime: the inference pool still on the previous release", () => {
    const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/enterprise.yaml", import.meta.url)));
    // kube-state-metrics' shard: the nodes' families without every GPU exporter beside them.
    const nodes = blueprint.nodePools.reduce((sum, pool) => sum + pool.nodes, 0);
    let info: Sample[] = [];
    drive(new ClusterRun(blueprint, { shard: { index: 1, count: nodes + 1 } }), [simulatedMs(MINUTE)], (frame) => {
      info = allSamples(frame.targets).filter((s) => s.family.name === "kube_node_info");
    });
    const byPool = new Map<string, Set<string>>();
    for (const s of info) {
      const pool = blueprint.nodePools.find((p) => s.labels.node?.startsWith(p.nodeNamePrefix ?? `${p.name}-node-`))?.name ?? "?";
      const { kubelet_version, kubeproxy_version, kernel_version, os_image, container_runtime_version } = s.labels;
      expect(kubeproxy_version).toBe(kubelet_version);
      byPool.set(
        pool,
        (byPool.get(pool) ?? new Set()).add(`${kubelet_version} ${kernel_version} ${os_image} ${container_runtime_version}`),
      );
    }
    expect(info).toHaveLength(nodes);
    // Each pool's nodes report what its blueprint entry declares, and the pools do not all agree.
    for (const pool of blueprint.nodePools) {
      const sw = pool.software;
      expect([...(byPool.get(pool.name) ?? [])], pool.name).toEqual([
        `${sw.kubeletVersion} ${sw.kernelVersion} ${sw.osImage} ${sw.containerRuntimeVersion}`,
      ]);
    }
    expect(new Set([...byPool.values()].flatMap((v) => [...v])).size).toBeGreaterThan(1);
  });
});
