/**
 * The Run:ai control-plane API identifiers gpusynth serves, pinned to control plane 2.24: the
 * vendor's OpenAPI spec as vendored in runai-professional-services/runapy at tag v1.224.0
 * (commit 06000dd8f189375cbbeae0c92196c191af7e3a3e, .generator/swagger.json). Every enum below
 * is that spec's `components.schemas.<Name>.enum` (or a parameter's), verbatim and in its order;
 * a test compares them with the spec. These are API identifiers: they never become Prometheus
 * metric names. signals/runai-api.md documents each, with what gpusynth computes for it.
 */

export const API_PIN = {
  controlPlane: "2.24",
  repository: "runai-professional-services/runapy",
  tag: "v1.224.0",
  commit: "06000dd8f189375cbbeae0c92196c191af7e3a3e",
  path: ".generator/swagger.json",
} as const;

/** Cluster and node-pool metrics (schema MetricsType). */
export const METRICS_TYPE = [
  "TOTAL_GPU_NODES",
  "GPU_UTILIZATION",
  "GPU_UTILIZATION_DISTRIBUTION",
  "GPU_MEMORY_UTILIZATION",
  "CPU_UTILIZATION",
  "CPU_MEMORY_UTILIZATION",
  "TOTAL_GPU",
  "GPU_QUOTA",
  "ALLOCATED_GPU",
  "UNALLOCATED_GPU",
  "AVG_WORKLOAD_WAIT_TIME",
  "WORKLOADS_COUNT",
] as const;

/** The per-GPU profiling types node and pod metrics share ("Advanced GPU Metrics", per the spec). */
const PROFILING_PER_GPU = [
  "GPU_GRAPHICS_ENGINE_ACTIVITY_PER_GPU",
  "GPU_SM_ACTIVITY_PER_GPU",
  "GPU_SM_OCCUPANCY_PER_GPU",
  "GPU_TENSOR_ACTIVITY_PER_GPU",
  "GPU_FP64_ENGINE_ACTIVITY_PER_GPU",
  "GPU_FP32_ENGINE_ACTIVITY_PER_GPU",
  "GPU_FP16_ENGINE_ACTIVITY_PER_GPU",
  "GPU_MEMORY_BANDWIDTH_UTILIZATION_PER_GPU",
  "GPU_NVLINK_TRANSMITTED_BANDWIDTH_PER_GPU",
  "GPU_NVLINK_RECEIVED_BANDWIDTH_PER_GPU",
  "GPU_PCIE_TRANSMITTED_BANDWIDTH_PER_GPU",
  "GPU_PCIE_RECEIVED_BANDWIDTH_PER_GPU",
] as const;

/** Node metrics (schema NodeMetricType). */
export const NODE_METRIC_TYPE = [
  "GPU_UTILIZATION_PER_GPU",
  "GPU_UTILIZATION",
  "GPU_MEMORY_UTILIZATION_PER_GPU",
  "GPU_MEMORY_UTILIZATION",
  "GPU_MEMORY_USAGE_BYTES_PER_GPU",
  "GPU_MEMORY_USAGE_BYTES",
  "GPU_ALLOCATION_PER_GPU",
  "GPU_MEMORY_ALLOCATION_BYTES_PER_GPU",
  "GPU_IDLE_TIME_SECONDS_PER_GPU",
  "CPU_USAGE_CORES",
  "CPU_UTILIZATION",
  "CPU_MEMORY_USAGE_BYTES",
  "CPU_MEMORY_UTILIZATION",
  "GPU_OOMKILL_BURST_COUNT_PER_GPU",
  "GPU_OOMKILL_IDLE_COUNT_PER_GPU",
  "GPU_OOMKILL_SWAP_OUT_OF_RAM_COUNT_PER_GPU",
  ...PROFILING_PER_GPU,
  "NVLINK_BANDWIDTH_TOTAL",
  "NVLINK_BANDWIDTH_TOTAL_PER_GPU",
] as const;

const NIM_METRIC_TYPE = [
  "NIM_NUM_REQUESTS_RUNNING",
  "NIM_NUM_REQUESTS_WAITING",
  "NIM_NUM_REQUEST_MAX",
  "NIM_REQUEST_SUCCESS_TOTAL",
  "NIM_REQUEST_FAILURE_TOTAL",
  "NIM_GPU_CACHE_USAGE_PERC",
  "NIM_TIME_TO_FIRST_TOKEN_SECONDS",
  "NIM_E2E_REQUEST_LATENCY_SECONDS",
  "NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES",
  "NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES",
] as const;

/** Workload metrics (schema WorkloadMetricType). */
export const WORKLOAD_METRIC_TYPE = [
  "GPU_UTILIZATION",
  "GPU_MEMORY_USAGE_BYTES",
  "GPU_MEMORY_REQUEST_BYTES",
  "CPU_USAGE_CORES",
  "CPU_REQUEST_CORES",
  "CPU_LIMIT_CORES",
  "CPU_MEMORY_USAGE_BYTES",
  "CPU_MEMORY_REQUEST_BYTES",
  "CPU_MEMORY_LIMIT_BYTES",
  "POD_COUNT",
  "RUNNING_POD_COUNT",
  "GPU_ALLOCATION",
  ...NIM_METRIC_TYPE,
  "NVLINK_BANDWIDTH_TOTAL",
] as const;

/** Pod metrics (schema PodMetricType). */
export const POD_METRIC_TYPE = [
  "GPU_UTILIZATION_PER_GPU",
  "GPU_UTILIZATION",
  "GPU_MEMORY_USAGE_BYTES_PER_GPU",
  "GPU_MEMORY_USAGE_BYTES",
  "CPU_USAGE_CORES",
  "CPU_MEMORY_USAGE_BYTES",
  ...PROFILING_PER_GPU,
  "GPU_SWAP_MEMORY_BYTES_PER_GPU",
  ...NIM_METRIC_TYPE,
  "NVLINK_BANDWIDTH_TOTAL",
  "NVLINK_BANDWIDTH_TOTAL_PER_GPU",
] as const;

/** Project and department metrics (schema OrgUnitMetricType). */
export const ORG_UNIT_METRIC_TYPE = [
  "GPU_QUOTA",
  "CPU_QUOTA_MILLICORES",
  "CPU_MEMORY_QUOTA_MB",
  "GPU_ALLOCATION",
  "CPU_ALLOCATION_MILLICORES",
  "CPU_MEMORY_ALLOCATION_MB",
  "GPU_MEMORY_UTILIZATION",
] as const;

/** Node telemetry (schema NodeTelemetryType). */
export const NODE_TELEMETRY_TYPE = [
  "READY_GPU_NODES",
  "READY_GPUS",
  "TOTAL_GPU_NODES",
  "TOTAL_GPUS",
  "IDLE_ALLOCATED_GPUS",
  "FREE_GPUS",
  "ALLOCATED_GPUS",
  "TOTAL_CPU_CORES",
  "USED_CPU_CORES",
  "ALLOCATED_CPU_CORES",
  "TOTAL_GPU_MEMORY_BYTES",
  "USED_GPU_MEMORY_BYTES",
  "TOTAL_CPU_MEMORY_BYTES",
  "USED_CPU_MEMORY_BYTES",
  "ALLOCATED_CPU_MEMORY_BYTES",
  "FULLY_FREE_GPU_NODES",
] as const;

/** Workload telemetry (schema WorkloadTelemetryType). */
export const WORKLOAD_TELEMETRY_TYPE = ["WORKLOADS_COUNT", "GPU_ALLOCATION", "PENDING_TIME_DISTRIBUTION"] as const;

/** Project and department telemetry (schema OrgUnitTelemetryType). */
export const ORG_UNIT_TELEMETRY_TYPE = [
  "GPU_QUOTA",
  "CPU_QUOTA",
  "MEMORY_QUOTA",
  "GPU_ALLOCATION",
  "CPU_ALLOCATION",
  "MEMORY_ALLOCATION",
  "GPU_ALLOCATION_NON_PREEMPTIBLE",
  "CPU_ALLOCATION_NON_PREEMPTIBLE",
  "MEMORY_ALLOCATION_NON_PREEMPTIBLE",
] as const;

/** groupBy values per endpoint (parameters ClusterMetricsGroupBy, TelemetryGroupBy, …1, …Project, …Department). */
export const CLUSTER_METRICS_GROUP_BY = ["Category", "Nodepool", "Project", "Department"] as const;
export const NODE_TELEMETRY_GROUP_BY = ["ClusterId", "Nodepool", "Node"] as const;
export const WORKLOAD_TELEMETRY_GROUP_BY = [
  "ClusterId",
  "DepartmentId",
  "ProjectId",
  "Type",
  "CurrentNodepools",
  "Phase",
  "Category",
] as const;
export const PROJECT_TELEMETRY_GROUP_BY = ["ClusterId", "NodepoolId", "ParentId"] as const;
export const DEPARTMENT_TELEMETRY_GROUP_BY = ["CLUSTER_ID"] as const;

/** Workload phases (schema Phase). */
export const PHASES = [
  "Creating",
  "Initializing",
  "Resuming",
  "Pending",
  "Deleting",
  "Running",
  "Updating",
  "Stopped",
  "Stopping",
  "Degraded",
  "Failed",
  "Completed",
  "Terminating",
  "Unknown",
] as const;
export type Phase = (typeof PHASES)[number];

/** Query parameter limits (parameters NumberOfSamples, Limit). */
export const NUMBER_OF_SAMPLES = { min: 0, max: 1000, default: 20 } as const;
export const PAGE_LIMIT = { min: 1, max: 500, default: 50 } as const;
/** Telemetry groupBy: at most two keys (maxItems 2). */
export const MAX_GROUP_BY = 2;
