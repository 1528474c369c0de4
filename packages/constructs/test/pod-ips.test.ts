/**
 * Pod IPs as a node's IPAM hands them out: no two running pods on a node share an address (a
 * hash of the pod's uid into the node's /24 gave 555 shared pairs in an enterprise day), each
 * address is inside its node's pod CIDR, and a pod keeps its address while it runs.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint, MAX_NODES } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Sample } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { nodeInternalIp, podCidr, systemPodIp, systemPodIpOnNode } from "../src/addresses.js";

const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/enterprise.yaml", import.meta.url)));

describe("pod IPs", () => {
  it("come from a valid /24 of each node's own, for every node a blueprint may have, clear of the control plane's /24, the nodes' and the services' ranges", () => {
    const octets = (address: string) => address.split(/[./]/).slice(0, 4).map(Number);
    const valid = (address: string) => octets(address).every((octet) => Number.isInteger(octet) && octet >= 0 && octet <= 255);
    const controlPlane = systemPodIp("kube-state-metrics");
    expect(valid(controlPlane)).toBe(true);
    const controlPlaneCidr = `${octets(controlPlane).slice(0, 3).join(".")}.0/24`;
    const seen = new Set<string>();
    const problems: string[] = [];
    // hyperscale.yaml's 12,800 nodes went as far as 10.293.255.0/24.
    for (let ordinal = 0; ordinal < MAX_NODES; ordinal++) {
      const cidr = podCidr(ordinal);
      const [, second] = octets(cidr) as [number, number];
      if (!valid(cidr) || !valid(systemPodIpOnNode(ordinal, 0)) || !valid(nodeInternalIp(ordinal)))
        problems.push(`node ${ordinal}: ${cidr}`);
      if (seen.has(cidr) || cidr === controlPlaneCidr) problems.push(`node ${ordinal}: ${cidr} taken`);
      // Nodes are in 10.0.0.0/16; kubeadm's default service range is 10.96.0.0/12.
      if (second === 0 || (second >= 96 && second < 112))
        problems.push(`node ${ordinal}: ${cidr} overlaps the nodes' or the services' range`);
      seen.add(cidr);
    }
    expect(problems.slice(0, 5)).toEqual([]);
    // The first thousand nodes keep Flannel's default network.
    expect(podCidr(0)).toBe("10.244.0.0/24");
  });

  it("are unique among the running pods of a node, inside its pod CIDR, and stable while a pod runs", () => {
    // kube-state-metrics' shard (shard.ts: rank 1), with more shards than nodes: the pods' and nodes'
    // families without every GPU's exporter beside them.
    const nodes = blueprint.nodePools.reduce((sum, pool) => sum + pool.nodes, 0);
    const run = new ClusterRun(blueprint, { shard: { index: 1, count: nodes + 1 }, sources: ["kube-state-metrics"] });
    const held = new Map<string, string>();
    const problems: string[] = [];
    let running = 0;
    drive(run, every(10 * 60_000, { toMs: 24 * 3_600_000 }), (frame) => {
      // The three families read, in one pass over the frame.
      const phases: Sample[] = [];
      const nodeInfo: Sample[] = [];
      const podInfo: Sample[] = [];
      for (const t of frame.targets) {
        if (t.target.job !== "kube-state-metrics") continue;
        for (const s of t.samples) {
          const name = s.family.name;
          if (name === "kube_pod_status_phase") phases.push(s);
          else if (name === "kube_node_info") nodeInfo.push(s);
          else if (name === "kube_pod_info") podInfo.push(s);
        }
      }
      const isRunning = new Set(phases.filter((s) => s.labels.phase === "Running" && s.value === 1).map((s) => s.labels.uid));
      const cidrs = new Map(
        nodeInfo.flatMap((s) => (s.labels.pod_cidr === undefined ? [] : [[s.labels.node, s.labels.pod_cidr] as const])),
      );
      const byNode = new Map<string, string[]>();
      // Pods on the host network (kube-proxy, calico-node) have their node's address; the others one of its pod CIDR.
      const podNetwork = podInfo.filter((s) => isRunning.has(s.labels.uid) && s.labels.host_network === "false");
      // The GPU operator's own pods (device plugin, DCGM exporter) are on the pod network of every GPU node.
      if (!podNetwork.some((s) => s.labels.namespace === "gpu-operator")) problems.push(`no gpu-operator pod at ${frame.simulatedMs} ms`);
      for (const info of podNetwork) {
        const { node = "", pod_ip: ip = "", uid = "" } = info.labels;
        const cidr = `${ip.split(".").slice(0, 3).join(".")}.0/24`;
        if (cidr !== cidrs.get(node)) problems.push(`pod ${uid} on ${node} has ${ip || "no address"}, outside ${cidrs.get(node)}`);
        const ips = byNode.get(node);
        if (ips === undefined) byNode.set(node, [ip]);
        else ips.push(ip);
        const before = held.get(uid);
        if (before !== undefined && before !== ip) problems.push(`pod ${uid} moved from ${before} to ${ip} while running`);
        held.set(uid, ip);
        running++;
      }
      for (const [node, ips] of byNode) if (new Set(ips).size !== ips.length) problems.push(`${node} gives one address to two pods`);
    });
    expect(problems.slice(0, 5)).toEqual([]);
    expect(running).toBeGreaterThan(1_000);
  });
});
