/**
 * Pod IPs as a node's IPAM hands them out: no two running pods on a node share an address (a
 * hash of the pod's uid into the node's /24 gave 555 shared pairs in an enterprise day), each
 * address is inside its node's pod CIDR, and a pod keeps its address while it runs.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";

const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/enterprise.yaml", import.meta.url)));

describe("pod IPs", () => {
  it("are unique among the running pods of a node, inside its pod CIDR, and stable while a pod runs", () => {
    const run = new ClusterRun(blueprint);
    const held = new Map<string, string>();
    let running = 0;
    drive(run, every(10 * 60_000, { toMs: 24 * 3_600_000 }), (frame) => {
      const samples = frame.targets.flatMap((t) => t.samples);
      const isRunning = new Set(
        samples
          .filter((s) => s.family.name === "kube_pod_status_phase" && s.labels.phase === "Running" && s.value === 1)
          .map((s) => s.labels.uid),
      );
      const cidrs = new Map(
        samples
          .filter((s) => s.family.name === "kube_node_spec_unschedulable" || s.family.name === "kube_node_info")
          .flatMap((s) => (s.labels.pod_cidr === undefined ? [] : [[s.labels.node, s.labels.pod_cidr] as const])),
      );
      const byNode = new Map<string, string[]>();
      // Pods on the host network (kube-proxy, calico-node) have their node's address; the others one of its pod CIDR.
      const podNetwork = samples.filter(
        (s) => s.family.name === "kube_pod_info" && isRunning.has(s.labels.uid) && s.labels.host_network === "false",
      );
      expect(podNetwork.some((s) => s.labels.namespace === "gpu-operator")).toBe(true);
      for (const info of podNetwork) {
        const { node = "", pod_ip: ip = "", uid = "" } = info.labels;
        expect(ip, uid).not.toBe("");
        expect(`${ip.split(".").slice(0, 3).join(".")}.0/24`).toBe(cidrs.get(node));
        byNode.set(node, [...(byNode.get(node) ?? []), ip]);
        const before = held.get(uid);
        if (before !== undefined) expect(ip, uid).toBe(before);
        held.set(uid, ip);
        running++;
      }
      for (const [node, ips] of byNode) expect(new Set(ips).size, node).toBe(ips.length);
    });
    expect(running).toBeGreaterThan(1_000);
  });
});
