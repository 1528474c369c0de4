/**
 * The cluster around the workloads, as kube-state-metrics shows it: in gpu-fault (two GPU nodes,
 * one rebooted 03:30–03:40), every node runs one pod of each node DaemonSet (kube-proxy,
 * calico-node, the GPU Operator's operands, node-feature-discovery's worker), the Deployments
 * run their replicas, the pods that are scraped or logged (dcgm-exporter, KAI's scheduler) are the
 * pods kube-state-metrics lists, and a reboot shows in the DaemonSets' ready counts and the pods'
 * restarts.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, type Frame, frameKept, type LogRecordOut, type Sample } from "@gpusynth/constructs";
import { simulatedMs } from "@gpusynth/sim";
import { beforeAll, describe, expect, it } from "vitest";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/gpu-fault.yaml", import.meta.url));
const MINUTE = 60_000;
const AT = { before: 3 * 60 * MINUTE, rebooting: 3 * 60 * MINUTE + 35 * MINUTE, after: 4 * 60 * MINUTE };

describe("system workloads in gpu-fault", () => {
  const { blueprint } = loadBlueprint(scenario);
  const frames = new Map<number, Frame>();
  const logs: LogRecordOut[] = [];

  beforeAll(() => {
    const run = new ClusterRun(blueprint, { logs: true });
    drive(run, [AT.before, AT.rebooting, AT.after].map(simulatedMs), (frame) => {
      frames.set(frame.simulatedMs, frameKept(frame));
      const scheduler = frame.logs.find((r) => r.area === "kai-scheduler");
      if (scheduler !== undefined) logs.push(scheduler);
    });
  });

  const samples = (t: number, name: string): Sample[] =>
    (frames.get(t) as Frame).targets.flatMap((target) => target.samples.filter((s) => s.family.name === name));
  const value = (t: number, name: string, labels: Record<string, string>) =>
    samples(t, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
  const nodes = blueprint.nodePools.reduce((n, p) => n + p.nodes, 0);

  it("runs one pod of each node DaemonSet on every node, and each Deployment's replicas", () => {
    const pods = samples(AT.before, "kube_pod_info").filter((s) => !s.labels.namespace?.startsWith("runai-"));
    const byOwner = new Map<string, Set<string>>();
    for (const p of pods) {
      const key = `${p.labels.created_by_kind}/${p.labels.created_by_name}`;
      byOwner.set(key, new Set([...(byOwner.get(key) ?? []), p.labels.node as string]));
    }
    for (const ds of [
      "kube-proxy",
      "calico-node",
      "nvidia-driver-daemonset",
      "nvidia-device-plugin-daemonset",
      "nvidia-dcgm-exporter",
      "gpu-feature-discovery",
    ]) {
      expect(byOwner.get(`DaemonSet/${ds}`)?.size, ds).toBe(nodes);
      expect(value(AT.before, "kube_daemonset_status_desired_number_scheduled", { daemonset: ds }), ds).toBe(nodes);
    }
    // No node is MIG- or MPS-capable: the DaemonSets exist with no pod.
    expect(value(AT.before, "kube_daemonset_status_desired_number_scheduled", { daemonset: "nvidia-mig-manager" })).toBe(0);
    expect(value(AT.before, "kube_deployment_spec_replicas", { deployment: "coredns" })).toBe(2);
    expect(pods.filter((p) => p.labels.created_by_kind === "ReplicaSet" && p.labels.created_by_name?.startsWith("coredns-")).length).toBe(
      2,
    );
    // kubeadm's CoreDNS requests and limits (dns/manifests.go at v1.30.2).
    const coredns = samples(AT.before, "kube_pod_container_resource_requests").filter((s) => s.labels.container === "coredns");
    expect(coredns.filter((s) => s.labels.resource === "cpu").map((s) => s.value)).toEqual([0.1, 0.1]);
    expect(coredns.filter((s) => s.labels.resource === "memory").map((s) => s.value)).toEqual([70 * 2 ** 20, 70 * 2 ** 20]);
  });

  it("lists the pods that are scraped and logged: dcgm-exporter's targets and the scheduler whose log is read", () => {
    const listed = new Set(samples(AT.before, "kube_pod_info").map((s) => `${s.labels.namespace}/${s.labels.pod}`));
    const exporters = (frames.get(AT.before) as Frame).targets.filter((t) => t.target.job === "nvidia-dcgm-exporter");
    expect(exporters.length).toBe(nodes);
    for (const { target } of exporters) {
      const address = target.kubernetes?.address;
      const pod = address !== undefined && "pod" in address ? address.pod : undefined;
      expect(listed.has(`gpu-operator/${pod}`), pod).toBe(true);
    }
    const scheduler = logs.find((r) => r.resource?.["k8s.namespace.name"] === "kai-scheduler");
    expect(scheduler).toBeDefined();
    expect(listed.has(`kai-scheduler/${scheduler?.resource?.["k8s.pod.name"]}`)).toBe(true);
    // The scheduler's scrape target is its pod's address.
    const target = (frames.get(AT.before) as Frame).targets.find((t) => t.target.job === "kai-scheduler-default");
    const pod = samples(AT.before, "kube_pod_info").find((s) => s.labels.pod === scheduler?.resource?.["k8s.pod.name"]);
    expect(target?.target.host).toBe(pod?.labels.pod_ip);
    // kube-state-metrics is one of the pods it lists, and is scraped there.
    const ksm = (frames.get(AT.before) as Frame).targets.find((t) => t.target.job === "kube-state-metrics");
    const ksmPod = samples(AT.before, "kube_pod_info").find((s) => s.labels.created_by_name?.startsWith("kube-state-metrics-"));
    expect(ksm?.target.host).toBe(ksmPod?.labels.pod_ip);
  });

  it("shows a rebooting node's system pods not ready, and restarted once it is back", () => {
    expect(value(AT.rebooting, "kube_daemonset_status_number_ready", { daemonset: "kube-proxy" })).toBe(nodes - 1);
    expect(value(AT.rebooting, "kube_daemonset_status_number_unavailable", { daemonset: "kube-proxy" })).toBe(1);
    expect(value(AT.after, "kube_daemonset_status_number_ready", { daemonset: "kube-proxy" })).toBe(nodes);
    const restarts = (t: number) =>
      samples(t, "kube_pod_container_status_restarts_total")
        .filter((s) => s.labels.container === "kube-proxy")
        .map((s) => s.value)
        .sort();
    expect(restarts(AT.before)).toEqual([0, 0]);
    expect(restarts(AT.after)).toEqual([0, 1]);
  });
});
