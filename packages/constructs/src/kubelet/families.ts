/**
 * The kubelet's families: cAdvisor's, which it serves at /metrics/cadvisor, and its own on /metrics
 * (below), one place per family. cAdvisor's: names,
 * types and HELP verbatim from google/cadvisor v0.49.0 (the version Kubernetes v1.30.2 vendors,
 * its go.mod), metrics/prometheus.go; the label keys are the kubelet's containerPrometheusLabelsFunc
 * (pkg/kubelet/server/server.go@v1.30.2: id, name, image, pod, namespace, container) plus a
 * family's own, in the order client_golang writes them (sorted by name). Documented in
 * signals/kubelet.md under the same ids.
 */
import type { MetricFamily, MetricType } from "../catalogue.js";

const BASE = ["container", "id", "image", "name", "namespace", "pod"] as const;

const family = (name: string, type: MetricType, help: string, extra: readonly string[] = []): MetricFamily => ({
  id: `kubelet.${name}`,
  name,
  type,
  help,
  labels: [...BASE, ...extra].sort(),
});

/** In exposition order: client_golang's Gather sorts the families by name. */
export const CADVISOR = {
  cfsPeriods: family("container_cpu_cfs_periods_total", "counter", "Number of elapsed enforcement period intervals."),
  cfsThrottledPeriods: family("container_cpu_cfs_throttled_periods_total", "counter", "Number of throttled period intervals."),
  cfsThrottledSeconds: family(
    "container_cpu_cfs_throttled_seconds_total",
    "counter",
    "Total time duration the container has been throttled.",
  ),
  cpuSystem: family("container_cpu_system_seconds_total", "counter", "Cumulative system cpu time consumed in seconds."),
  cpuUsage: family("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed in seconds.", ["cpu"]),
  cpuUser: family("container_cpu_user_seconds_total", "counter", "Cumulative user cpu time consumed in seconds."),
  lastSeen: family("container_last_seen", "gauge", "Last time a container was seen by the exporter"),
  memoryCache: family("container_memory_cache", "gauge", "Number of bytes of page cache memory."),
  memoryRss: family("container_memory_rss", "gauge", "Size of RSS in bytes."),
  memorySwap: family("container_memory_swap", "gauge", "Container swap usage in bytes."),
  memoryUsage: family(
    "container_memory_usage_bytes",
    "gauge",
    "Current memory usage in bytes, including all memory regardless of when it was accessed",
  ),
  memoryWorkingSet: family("container_memory_working_set_bytes", "gauge", "Current working set in bytes."),
  specCpuPeriod: family("container_spec_cpu_period", "gauge", "CPU period of the container."),
  specCpuQuota: family("container_spec_cpu_quota", "gauge", "CPU quota of the container."),
  specCpuShares: family("container_spec_cpu_shares", "gauge", "CPU share of the container."),
  specMemoryLimit: family("container_spec_memory_limit_bytes", "gauge", "Memory limit for the container."),
  startTime: family("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds."),
} as const;

/**
 * The kubelet's own families on /metrics, those gpusynth has values for:
 * pkg/kubelet/metrics/metrics.go@v1.30.2 (subsystem `kubelet`; label keys verbatim). Each is
 * ALPHA, and component-base writes the stability level before its HELP
 * (k8s.io/component-base v0.30.2 metrics/opts.go annotateStabilityLevel). In exposition order.
 */
const own = (name: string, type: MetricType, help: string, labels: readonly string[] = []): MetricFamily => ({
  id: `kubelet.${name}`,
  name,
  type,
  help: `[ALPHA] ${help}`,
  labels,
});
export const KUBELET_OWN = {
  evictions: own("kubelet_evictions", "counter", "Cumulative number of pod evictions by eviction signal", ["eviction_signal"]),
  nodeName: own("kubelet_node_name", "gauge", "The node's name. The count is always 1.", ["node"]),
  runningContainers: own("kubelet_running_containers", "gauge", "Number of containers currently running", ["container_state"]),
  runningPods: own("kubelet_running_pods", "gauge", "Number of pods that have a running pod sandbox"),
} as const;

export const KUBELET_FAMILIES: readonly MetricFamily[] = [...Object.values(CADVISOR), ...Object.values(KUBELET_OWN)];
