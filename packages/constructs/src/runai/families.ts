/**
 * Run:ai cluster metric families gpusynth emits, one place per family: names and label sets
 * exactly as the Run:ai 2.18 docs list them ("(Deprecated) Metrics via Prometheus",
 * https://docs.run.ai/v2.18/developer/metrics/metrics/; full table in run-ai/docs
 * docs/developer/metrics/metrics.md, 2.17 text), including the vendor's own inconsistencies
 * (workload_id where the label dictionary says workload_uuid; job_* next to workload_* labels).
 * Run:ai states no Prometheus type for any family: all are emitted as gauges (cantfind.md).
 * Run:ai publishes no HELP texts, so the families carry none (their meaning is in
 * signals/runai.md; the missing HELP is a PENDING line in cantfind.md).
 * Documented in signals/runai.md under the same ids (the table's row numbers).
 */
import type { MetricFamily } from "../catalogue.js";

const family = (row: number, name: string, labels: readonly string[]): MetricFamily => ({
  id: `runai.${String(row).padStart(2, "0")}`,
  name,
  type: "gauge",
  help: "",
  labels,
});

const GPU = ["gpu", "clusterId", "node"] as const;
const GPU_R17 = ["clusterId", "gpu", "node"] as const;
const NODE = ["clusterId", "node"] as const;
const WORKLOAD = ["clusterId", "workload_id", "workload_name", "workload_type", "user"] as const;
const POD = ["clusterId", "pod_name", "pod_uuid", "pod_namespace", "node"] as const;
const POD_GPU = ["clusterId", "pod_name", "pod_uuid", "pod_namespace", "node", "gpu"] as const;
const PROJECT = ["clusterId", "project"] as const;

export const RUNAI = {
  allocatedPerGpu: family(6, "runai_allocated_gpu_count_per_gpu", GPU),
  lastUtilizationTimePerGpu: family(7, "runai_last_gpu_utilization_time_per_gpu", GPU),
  requestedGpuMemoryPerWorkload: family(8, "runai_requested_gpu_memory_mb_per_workload", [
    "clusterId",
    "job_type",
    "job_uuid",
    "job_name",
    "project",
    "workload_id",
  ]),
  requestedGpusPerWorkload: family(9, "runai_requested_gpus_per_workload", [
    "clusterId",
    "workload_type",
    "workload_id",
    "workload_name",
    "project",
  ]),
  runTimePerWorkload: family(10, "runai_run_time_seconds_per_workload", ["clusterId", "workload_id", "workload_name"]),
  waitTimePerWorkload: family(11, "runai_wait_time_seconds_per_workload", ["clusterId", "workload_id", "workload_name"]),
  projectGuaranteedGpus: family(17, "runai_project_guaranteed_gpus", PROJECT),
  projectInfo: family(18, "runai_project_info", [
    "memory_quota",
    "cpu_quota",
    "gpu_guaranteed_quota",
    "clusterId",
    "project",
    "department",
  ]),
  queueInfo: family(19, "runai_queue_info", [
    "memory_quota",
    "cpu_quota",
    "gpu_guaranteed_quota",
    "clusterId",
    "nodepool",
    "queue_name",
    "department",
  ]),
  migModeGpuCount: family(24, "runai_mig_mode_gpu_count", NODE),
  gpuUtilizationPerGpu: family(25, "runai_gpu_utilization_per_gpu", GPU_R17),
  gpuUtilizationPerNode: family(26, "runai_gpu_utilization_per_node", NODE),
  gpuMemoryUsedPerGpu: family(27, "runai_gpu_memory_used_mebibytes_per_gpu", GPU_R17),
  gpuMemoryUsedPerNode: family(28, "runai_gpu_memory_used_mebibytes_per_node", NODE),
  gpuMemoryTotalPerGpu: family(29, "runai_gpu_memory_total_mebibytes_per_gpu", GPU_R17),
  gpuMemoryTotalPerNode: family(30, "runai_gpu_memory_total_mebibytes_per_node", NODE),
  gpuCountPerNode: family(31, "runai_gpu_count_per_node", ["clusterId", "node", "modelName", "ready", "schedulable"]),
  allocatedPerWorkload: family(32, "runai_allocated_gpu_count_per_workload", WORKLOAD),
  allocatedPerProject: family(33, "runai_allocated_gpu_count_per_project", PROJECT),
  gpuMemoryUsedPerPodPerGpu: family(34, "runai_gpu_memory_used_mebibytes_per_pod_per_gpu", POD_GPU),
  gpuMemoryUsedPerWorkload: family(35, "runai_gpu_memory_used_mebibytes_per_workload", WORKLOAD),
  gpuUtilizationPerPodPerGpu: family(36, "runai_gpu_utilization_per_pod_per_gpu", POD_GPU),
  gpuUtilizationPerWorkload: family(37, "runai_gpu_utilization_per_workload", WORKLOAD),
  gpuUtilizationPerProject: family(38, "runai_gpu_utilization_per_project", PROJECT),
  lastUtilizationTimePerWorkload: family(39, "runai_last_gpu_utilization_time_per_workload", WORKLOAD),
  gpuIdleSecondsPerWorkload: family(40, "runai_gpu_idle_seconds_per_workload", WORKLOAD),
  allocatedPerPod: family(41, "runai_allocated_gpu_count_per_pod", POD),
  allocatedPerNode: family(42, "runai_allocated_gpu_count_per_node", NODE),
} as const;

const JOB = ["clusterId", "job_name", "job_uuid"] as const;
const CLUSTER = ["clusterId"] as const;
const WORKLOAD_PROJECT = ["clusterId", "workload_id", "workload_name", "project"] as const;

/** The CPU and memory families (rows 1–5, 12–16, 20–23, 43–44), from the kubelet's view of the containers. */
export const RUNAI_CPU_MEMORY = {
  activeCpuRequested: family(1, "runai_active_job_cpu_requested_cores", JOB),
  activeMemoryRequested: family(2, "runai_active_job_memory_requested_bytes", JOB),
  clusterCpuUtilization: family(3, "runai_cluster_cpu_utilization", CLUSTER),
  clusterMemoryUsed: family(4, "runai_cluster_memory_used_bytes", CLUSTER),
  clusterMemoryUtilization: family(5, "runai_cluster_memory_utilization", CLUSTER),
  nodeCpuRequested: family(12, "runai_node_cpu_requested_cores", NODE),
  nodeCpuUtilization: family(13, "runai_node_cpu_utilization", NODE),
  nodeMemoryUtilization: family(14, "runai_node_memory_utilization", NODE),
  nodeMemoryRequested: family(15, "runai_node_requested_memory_bytes", NODE),
  nodeMemoryUsed: family(16, "runai_node_used_memory_bytes", NODE),
  cpuLimitPerWorkload: family(20, "runai_cpu_limits_per_active_workload", JOB),
  jobCpuUsage: family(21, "runai_job_cpu_usage", WORKLOAD_PROJECT),
  memoryLimitPerWorkload: family(22, "runai_memory_limits_per_active_workload", JOB),
  jobMemoryUsed: family(23, "runai_job_memory_used_bytes", WORKLOAD_PROJECT),
  allocatedMilliCpusPerPod: family(43, "runai_allocated_millicpus_per_pod", POD),
  allocatedMemoryPerPod: family(44, "runai_allocated_memory_per_pod", POD),
} as const;

export const RUNAI_FAMILIES: readonly MetricFamily[] = [...Object.values(RUNAI), ...Object.values(RUNAI_CPU_MEMORY)];
