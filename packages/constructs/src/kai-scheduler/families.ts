/**
 * KAI-Scheduler metric families (the open-source Run:ai scheduler; its names stand in for the
 * closed Run:ai scheduler's), one place per family: names with the default --metrics-namespace
 * "kai", types, help strings and labels from NVIDIA/KAI-Scheduler v0.13.0 (@5d35ecab):
 * pkg/scheduler/metrics/metrics.go and pkg/queuecontroller/metrics/metrics.go. Documented in
 * signals/kai-scheduler.md under the same ids.
 */
import type { MetricFamily, MetricType } from "../catalogue.js";

const family = (id: string, name: string, type: MetricType, help: string, labels: readonly string[] = []): MetricFamily => ({
  id: `kai-scheduler.${id}`,
  name,
  type,
  help,
  labels,
});

/** Served by the scheduler (kai-scheduler-default Service, :8080/metrics). */
export const KAI_SCHEDULER = {
  e2eLatency: family(
    "e2e_scheduling_latency_milliseconds",
    "kai_e2e_scheduling_latency_milliseconds",
    "gauge",
    "E2e scheduling latency in milliseconds (scheduling algorithm + binding), as a gauge",
  ),
  openSessionLatency: family(
    "open_session_latency_milliseconds",
    "kai_open_session_latency_milliseconds",
    "gauge",
    "Open session latency in milliseconds, including all plugins, as a gauge",
  ),
  closeSessionLatency: family(
    "close_session_latency_milliseconds",
    "kai_close_session_latency_milliseconds",
    "gauge",
    "Close session latency in milliseconds, including all plugins, as a gauge",
  ),
  actionLatency: family(
    "action_scheduling_latency_milliseconds",
    "kai_action_scheduling_latency_milliseconds",
    "gauge",
    "Action scheduling latency in milliseconds, as a gauge",
    ["action"],
  ),
  podGroupsScheduled: family(
    "podgroups_scheduled_by_action",
    "kai_podgroups_scheduled_by_action",
    "counter",
    "Count of podgroups scheduled per action",
    ["action"],
  ),
  podGroupsActedOn: family(
    "podgroups_acted_on_by_action",
    "kai_podgroups_acted_on_by_action",
    "counter",
    "Count of podgroups tried per action",
    ["action"],
  ),
  totalPreemptionAttempts: family(
    "total_preemption_attempts",
    "kai_total_preemption_attempts",
    "counter",
    "Total preemption attempts in the cluster till now",
  ),
  queueFairShareGpu: family(
    "queue_fair_share_gpu",
    "kai_queue_fair_share_gpu",
    "gauge",
    "GPU Fair share of queue, as a gauge. Values in GPU devices",
    ["queue_name"],
  ),
  evictedPods: family(
    "pod_group_evicted_pods_total",
    "kai_pod_group_evicted_pods_total",
    "counter",
    "Total number of pods evicted per pod group",
    ["podgroup", "namespace", "uid", "nodepool", "action"],
  ),
} as const;

/** Served by the queue controller (queue-controller Service, :8080/metrics). */
export const KAI_QUEUE_CONTROLLER = {
  queueInfo: family("queue_info", "kai_queue_info", "gauge", "Queues info", ["queue_name"]),
  queueDeservedGpus: family("queue_deserved_gpus", "kai_queue_deserved_gpus", "gauge", "Queue deserved GPUs", ["queue_name"]),
  queueQuotaCpu: family("queue_quota_cpu_cores", "kai_queue_quota_cpu_cores", "gauge", "Queue quota CPU", ["queue_name"]),
  queueQuotaMemory: family("queue_quota_memory_bytes", "kai_queue_quota_memory_bytes", "gauge", "Queue quota memory", ["queue_name"]),
  queueAllocatedGpus: family("queue_allocated_gpus", "kai_queue_allocated_gpus", "gauge", "Queue allocated GPUs", ["queue_name"]),
  queueAllocatedCpus: family("queue_allocated_cpu_cores", "kai_queue_allocated_cpu_cores", "gauge", "Queue allocated CPUs", ["queue_name"]),
  queueAllocatedMemory: family("queue_allocated_memory_bytes", "kai_queue_allocated_memory_bytes", "gauge", "Queue allocated memory", [
    "queue_name",
  ]),
} as const;

export const SCHEDULER_FAMILIES: readonly MetricFamily[] = [...Object.values(KAI_SCHEDULER), ...Object.values(KAI_QUEUE_CONTROLLER)];
