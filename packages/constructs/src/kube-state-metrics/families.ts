/**
 * kube-state-metrics families gpusynth emits, one place per family: name, type, HELP text as
 * printed (STABLE families carry the "[STABLE] " prefix of generator.go's header) and labels in
 * output order, from kubernetes/kube-state-metrics v2.13.0 (@76c5888): internal/store/pod.go,
 * node.go. Documented in signals/kube-state-metrics.md under the same ids.
 */
import type { MetricFamily } from "../catalogue.js";

const POD = ["namespace", "pod", "uid"] as const;
const family = (
  id: string,
  name: string,
  help: string,
  labels: readonly string[],
  stable = true,
  type: MetricFamily["type"] = "gauge",
): MetricFamily => ({
  id: `kube-state-metrics.${id}`,
  name,
  type,
  help: stable ? `[STABLE] ${help}` : help,
  labels,
});

export const KSM = {
  podInfo: family("pod_info", "kube_pod_info", "Information about pod.", [
    ...POD,
    "host_ip",
    "pod_ip",
    "node",
    "created_by_kind",
    "created_by_name",
    "priority_class",
    "host_network",
  ]),
  podStatusPhase: family("pod_status_phase", "kube_pod_status_phase", "The pods current phase.", [...POD, "phase"]),
  podOwner: family("pod_owner", "kube_pod_owner", "Information about the Pod's owner.", [
    ...POD,
    "owner_kind",
    "owner_name",
    "owner_is_controller",
  ]),
  /** label_* keys follow the allowlist (see podLabelKeys in index.ts). */
  podLabels: family("pod_labels", "kube_pod_labels", "Kubernetes labels converted to Prometheus labels.", [...POD, "label_*"]),
  podTerminatedReason: family(
    "pod_container_status_terminated_reason",
    "kube_pod_container_status_terminated_reason",
    "Describes the reason the container is currently in terminated state.",
    [...POD, "container", "reason"],
    false,
  ),
  podRestarts: family(
    "pod_container_status_restarts_total",
    "kube_pod_container_status_restarts_total",
    "The number of container restarts per container.",
    [...POD, "container"],
    true,
    "counter",
  ),
  podWaitingReason: family(
    "pod_container_status_waiting_reason",
    "kube_pod_container_status_waiting_reason",
    "Describes the reason the container is currently in waiting state.",
    [...POD, "container", "reason"],
  ),
  podLastTerminatedReason: family(
    "pod_container_status_last_terminated_reason",
    "kube_pod_container_status_last_terminated_reason",
    "Describes the last reason the container was in terminated state.",
    [...POD, "container", "reason"],
    false,
  ),
  podStatusReason: family("pod_status_reason", "kube_pod_status_reason", "The pod status reasons", [...POD, "reason"], false),
  podReady: family("pod_status_ready", "kube_pod_status_ready", "Describes whether the pod is ready to serve requests.", [
    ...POD,
    "condition",
  ]),
  containerReady: family(
    "pod_container_status_ready",
    "kube_pod_container_status_ready",
    "Describes whether the containers readiness check succeeded.",
    [...POD, "container"],
  ),
  containerRunning: family(
    "pod_container_status_running",
    "kube_pod_container_status_running",
    "Describes whether the container is currently in running state.",
    [...POD, "container"],
  ),
  containerWaiting: family(
    "pod_container_status_waiting",
    "kube_pod_container_status_waiting",
    "Describes whether the container is currently in waiting state.",
    [...POD, "container"],
  ),
  containerTerminated: family(
    "pod_container_status_terminated",
    "kube_pod_container_status_terminated",
    "Describes whether the container is currently in terminated state.",
    [...POD, "container"],
  ),
  namespacePhase: family("namespace_status_phase", "kube_namespace_status_phase", "kubernetes namespace status phase.", [
    "namespace",
    "phase",
  ]),
  podUnschedulable: family(
    "pod_status_unschedulable",
    "kube_pod_status_unschedulable",
    "Describes the unschedulable status for the pod.",
    POD,
  ),
  podScheduled: family("pod_status_scheduled", "kube_pod_status_scheduled", "Describes the status of the scheduling process for the pod.", [
    ...POD,
    "condition",
  ]),
  podResourceRequests: family(
    "pod_container_resource_requests",
    "kube_pod_container_resource_requests",
    "The number of requested request resource by a container. It is recommended to use the kube_pod_resource_requests metric exposed by kube-scheduler instead, as it is more precise.",
    [...POD, "container", "node", "resource", "unit"],
    false,
  ),
  containerInfo: family("pod_container_info", "kube_pod_container_info", "Information about a container in a pod.", [
    ...POD,
    "container",
    "image_spec",
    "image",
    "image_id",
    "container_id",
  ]),
  podResourceLimits: family(
    "pod_container_resource_limits",
    "kube_pod_container_resource_limits",
    "The number of requested limit resource by a container. It is recommended to use the kube_pod_resource_limits metric exposed by kube-scheduler instead, as it is more precise.",
    [...POD, "container", "node", "resource", "unit"],
    false,
  ),
  podCreated: family("pod_created", "kube_pod_created", "Unix creation timestamp", POD),
  podStartTime: family("pod_start_time", "kube_pod_start_time", "Start time in unix timestamp for a pod.", POD),
  nodeInfo: family("node_info", "kube_node_info", "Information about a cluster node.", [
    "node",
    "kernel_version",
    "os_image",
    "container_runtime_version",
    "kubelet_version",
    "kubeproxy_version",
    "provider_id",
    "pod_cidr",
    "system_uuid",
    "internal_ip",
  ]),
  nodeLabels: family("node_labels", "kube_node_labels", "Kubernetes labels converted to Prometheus labels.", ["node", "label_*"]),
  nodeRole: family("node_role", "kube_node_role", "The role of a cluster node.", ["node", "role"], false),
  nodeCapacity: family("node_status_capacity", "kube_node_status_capacity", "The capacity for different resources of a node.", [
    "node",
    "resource",
    "unit",
  ]),
  nodeAllocatable: family(
    "node_status_allocatable",
    "kube_node_status_allocatable",
    "The allocatable for different resources of a node that are available for scheduling.",
    ["node", "resource", "unit"],
  ),
  nodeSpecUnschedulable: family("node_spec_unschedulable", "kube_node_spec_unschedulable", "Whether a node can schedule new pods.", [
    "node",
  ]),
  nodeSpecTaint: family("node_spec_taint", "kube_node_spec_taint", "The taint of a cluster node.", ["node", "key", "value", "effect"]),
  nodeCondition: family("node_status_condition", "kube_node_status_condition", "The condition of a cluster node.", [
    "node",
    "condition",
    "status",
  ]),
  ...daemonSetFamilies(),
  ...deploymentFamilies(),
  replicaSetOwner: family("replicaset_owner", "kube_replicaset_owner", "Information about the ReplicaSet's owner.", [
    "namespace",
    "replicaset",
    "owner_kind",
    "owner_name",
    "owner_is_controller",
  ]),
} as const;

/**
 * kube-state-metrics' own metrics, served on its telemetry port (--telemetry-port 8081):
 * pkg/watch/watch.go (list and watch counters per resource), pkg/sharding/metrics.go (its shard),
 * pkg/app/server.go (the custom-resource cache, unused without a custom-resource config), all
 * @76c5888. Plain client_golang metrics: no stability prefix.
 */
export const KSM_SELF = {
  listTotal: family(
    "state_metrics_list_total",
    "kube_state_metrics_list_total",
    "Number of total resource list in kube-state-metrics",
    ["resource", "result"],
    false,
    "counter",
  ),
  watchTotal: family(
    "state_metrics_watch_total",
    "kube_state_metrics_watch_total",
    "Number of total resource watches in kube-state-metrics",
    ["resource", "result"],
    false,
    "counter",
  ),
  shardOrdinal: family(
    "state_metrics_shard_ordinal",
    "kube_state_metrics_shard_ordinal",
    "Current sharding ordinal/index of this instance",
    ["shard_ordinal"],
    false,
  ),
  totalShards: family(
    "state_metrics_total_shards",
    "kube_state_metrics_total_shards",
    "Number of total shards this instance is aware of",
    [],
    false,
  ),
  crdAdds: family(
    "state_metrics_custom_resource_state_add_events_total",
    "kube_state_metrics_custom_resource_state_add_events_total",
    "Number of times that the CRD informer triggered the add event.",
    [],
    false,
    "counter",
  ),
  crdDeletes: family(
    "state_metrics_custom_resource_state_delete_events_total",
    "kube_state_metrics_custom_resource_state_delete_events_total",
    "Number of times that the CRD informer triggered the remove event.",
    [],
    false,
    "counter",
  ),
  crdCache: family(
    "state_metrics_custom_resource_state_cache",
    "kube_state_metrics_custom_resource_state_cache",
    "Net amount of CRDs affecting the cache currently.",
    [],
    false,
  ),
} as const;

export const KSM_FAMILIES: readonly MetricFamily[] = [...Object.values(KSM), ...Object.values(KSM_SELF)];

/** internal/store/daemonset.go@76c5888, in its order; labels and annotations have no samples without an allowlist. */
function daemonSetFamilies() {
  const ds = (id: string, help: string) => family(`daemonset_${id}`, `kube_daemonset_${id}`, help, ["namespace", "daemonset"]);
  return {
    daemonSetCreated: ds("created", "Unix creation timestamp"),
    daemonSetCurrent: ds("status_current_number_scheduled", "The number of nodes running at least one daemon pod and are supposed to."),
    daemonSetDesired: ds("status_desired_number_scheduled", "The number of nodes that should be running the daemon pod."),
    daemonSetAvailable: ds(
      "status_number_available",
      "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available",
    ),
    daemonSetMisscheduled: ds("status_number_misscheduled", "The number of nodes running a daemon pod but are not supposed to."),
    daemonSetReady: ds(
      "status_number_ready",
      "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
    ),
    daemonSetUnavailable: ds(
      "status_number_unavailable",
      "The number of nodes that should be running the daemon pod and have none of the daemon pod running and available",
    ),
    daemonSetObservedGeneration: ds("status_observed_generation", "The most recent generation observed by the daemon set controller."),
    daemonSetUpdated: ds("status_updated_number_scheduled", "The total number of nodes that are running updated daemon pod"),
    daemonSetGeneration: ds("metadata_generation", "Sequence number representing a specific generation of the desired state."),
  };
}

/** internal/store/deployment.go@76c5888, in its order; labels and annotations have no samples without an allowlist. */
function deploymentFamilies() {
  const deploy = (id: string, help: string, extra: readonly string[] = []) =>
    family(`deployment_${id}`, `kube_deployment_${id}`, help, ["namespace", "deployment", ...extra]);
  return {
    deploymentCreated: deploy("created", "Unix creation timestamp"),
    deploymentReplicas: deploy("status_replicas", "The number of replicas per deployment."),
    deploymentReady: deploy("status_replicas_ready", "The number of ready replicas per deployment."),
    deploymentAvailable: deploy("status_replicas_available", "The number of available replicas per deployment."),
    deploymentUnavailable: deploy("status_replicas_unavailable", "The number of unavailable replicas per deployment."),
    deploymentUpdated: deploy("status_replicas_updated", "The number of updated replicas per deployment."),
    deploymentObservedGeneration: deploy("status_observed_generation", "The generation observed by the deployment controller."),
    deploymentCondition: deploy("status_condition", "The current status conditions of a deployment.", ["condition", "status"]),
    deploymentSpecReplicas: deploy("spec_replicas", "Number of desired pods for a deployment."),
    deploymentPaused: deploy("spec_paused", "Whether the deployment is paused and will not be processed by the deployment controller."),
    deploymentMaxUnavailable: deploy(
      "spec_strategy_rollingupdate_max_unavailable",
      "Maximum number of unavailable replicas during a rolling update of a deployment.",
    ),
    deploymentMaxSurge: deploy(
      "spec_strategy_rollingupdate_max_surge",
      "Maximum number of replicas that can be scheduled above the desired number of replicas during a rolling update of a deployment.",
    ),
    deploymentGeneration: deploy("metadata_generation", "Sequence number representing a specific generation of the desired state."),
  };
}

/**
 * KSM's label-name conversion (internal/store/utils.go): invalid characters become "_",
 * camelCase becomes snake_case, everything lower case, prefixed "label_".
 */
export function ksmLabelName(kubernetesKey: string): string {
  const sanitised = kubernetesKey.replace(/[^a-zA-Z0-9_]/g, "_");
  return `label_${sanitised.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()}`;
}
