/**
 * Run:ai's CPU and memory families (signals/runai.md rows 1–5, 12–16, 20–23, 43–44): what the
 * workloads request, from the simulation, and what the containers use, from the kubelet's view
 * of them (kubelet/containers.ts, usage.ts) — so Run:ai's numbers and cAdvisor's agree. Usage is
 * the containers' at the instant (cores: the rate of their CPU counters; memory: the working set
 * cAdvisor reports); a node's and the cluster's are their containers', the system pods' included.
 */
import { nodeCpus, nodeMemoryBytes } from "@gpusynth/blueprint";
import type { ClusterView, DeepReadonly, Workload } from "@gpusynth/sim";
import type { KeptLabelSets, TargetSeries } from "../catalogue.js";
import type { NodeContainer, NodeContainers } from "../kubelet/containers.js";
import { cpuCores, memoryUse, workingSet } from "../kubelet/usage.js";
import { RUNAI_CPU_MEMORY as R } from "./families.js";

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

export function cpuMemorySamples(
  out: TargetSeries,
  view: ClusterView,
  clusterId: string,
  containers: NodeContainers,
  kept: KeptLabelSets,
): void {
  const now = view.now;
  let clusterCpus = 0;
  let clusterCores = 0;
  let clusterMemory = 0;
  let clusterUsed = 0;
  /** Each container's use, read once for its node and again for its workload. */
  const usage = new Map<NodeContainer, { readonly cores: number; readonly used: number }>();
  // Requests of the users' running pods per node ("all jobs running in a node").
  const requested = new Map<string, { cpuMilli: number; memory: number }>();
  for (const w of view.running)
    for (const pod of w.pods) {
      const r = requested.get(pod.node.name) ?? { cpuMilli: 0, memory: 0 };
      r.cpuMilli += w.cpuMilliPerGpu * pod.gpus.length;
      r.memory += w.memoryBytesPerGpu * pod.gpus.length;
      requested.set(pod.node.name, r);
    }
  for (const pool of view.pools)
    for (const node of pool.nodes) {
      if (node.status === "rebooting") continue;
      const labels = { clusterId, node: node.name };
      const cpus = nodeCpus(pool.spec);
      const memory = nodeMemoryBytes(pool.spec);
      let cores = 0;
      let used = 0;
      for (const c of containers.on(node.name, now)) {
        const u = { cores: cpuCores(c.usage, now), used: workingSet(memoryUse(c.usage, now)) };
        usage.set(c, u);
        cores += u.cores;
        used += u.used;
      }
      const r = requested.get(node.name) ?? { cpuMilli: 0, memory: 0 };
      // Each subject's label sets are kept with its object (a node, a workload, a pod), looked up once for its families.
      const nodeSets = kept.subject(node);
      kept.addIn(out, nodeSets, R.nodeCpuRequested, labels, r.cpuMilli / 1000);
      kept.addIn(out, nodeSets, R.nodeCpuUtilization, labels, round(cores / cpus, 4));
      kept.addIn(out, nodeSets, R.nodeMemoryUtilization, labels, round(used / memory, 4));
      kept.addIn(out, nodeSets, R.nodeMemoryRequested, labels, r.memory);
      kept.addIn(out, nodeSets, R.nodeMemoryUsed, labels, used);
      clusterCpus += cpus;
      clusterCores += cores;
      clusterMemory += memory;
      clusterUsed += used;
    }
  const cluster = { clusterId };
  kept.add(out, "cluster", R.clusterCpuUtilization, cluster, clusterCpus === 0 ? 0 : round(clusterCores / clusterCpus, 4));
  kept.add(out, "cluster", R.clusterMemoryUsed, cluster, clusterUsed);
  kept.add(out, "cluster", R.clusterMemoryUtilization, cluster, clusterMemory === 0 ? 0 : round(clusterUsed / clusterMemory, 4));

  // Active workloads (pending or running, as Run:ai's other per-workload families): what they ask for.
  for (const w of [...view.pending, ...view.running]) {
    const job = { clusterId, job_name: w.name, job_uuid: w.uid };
    const workload = kept.subject(w);
    kept.addIn(out, workload, R.activeCpuRequested, job, (w.cpuMilliPerGpu * w.gpus) / 1000);
    kept.addIn(out, workload, R.activeMemoryRequested, job, w.memoryBytesPerGpu * w.gpus);
    // Limits only where the workload set them: each of its pods' containers carries one.
    if (w.cpuLimitMilliPerGpu !== undefined) kept.addIn(out, workload, R.cpuLimitPerWorkload, job, (w.cpuLimitMilliPerGpu * w.gpus) / 1000);
    if (w.memoryLimitBytes !== undefined) kept.addIn(out, workload, R.memoryLimitPerWorkload, job, w.memoryLimitBytes * podCount(w));
  }
  for (const w of view.running) {
    let cores = 0;
    let used = 0;
    for (const pod of w.pods) {
      const c = containers.workloadContainer(pod.node.name, pod.uid, now);
      const u = c === undefined ? undefined : usage.get(c);
      cores += u?.cores ?? 0;
      used += u?.used ?? 0;
      const podLabels = { clusterId, pod_name: pod.name, pod_uuid: pod.uid, pod_namespace: w.namespace, node: pod.node.name };
      const podSets = kept.subject(pod);
      kept.addIn(out, podSets, R.allocatedMilliCpusPerPod, podLabels, w.cpuMilliPerGpu * pod.gpus.length);
      kept.addIn(out, podSets, R.allocatedMemoryPerPod, podLabels, w.memoryBytesPerGpu * pod.gpus.length);
    }
    const labels = { clusterId, workload_id: w.uid, workload_name: w.name, project: w.project };
    const workload = kept.subject(w);
    kept.addIn(out, workload, R.jobCpuUsage, labels, round(cores, 3));
    kept.addIn(out, workload, R.jobMemoryUsed, labels, used);
  }
}

/** The pods a workload runs (or will): its placed pods, else the ones waiting. */
function podCount(w: DeepReadonly<Workload>): number {
  return w.pods.length > 0 ? w.pods.length : Math.max(1, w.pendingPods.length);
}
