/**
 * The read endpoints' objects, shaped as the 2.24 spec's schemas (DisplayedCluster, Nodepool,
 * Node, Project, Department/DepartmentForList, Workload/WorkloadDetailed, Pod): the required
 * fields always, optional ones where the simulation knows the value, nothing it does not know.
 * Field names are the spec's; signals/runai-api.md lists which fields gpusynth fills and how.
 */

import { type PodRecord, projectNamespace, WorkloadLedger, type WorkloadRecord } from "@gpusynth/sim";
import { containerName } from "../naming.js";
import type { NodeSlot, OrgUnit, PoolSlot } from "./cluster-index.js";
import type { ControlPlane } from "./control-plane.js";
import { API_TENANT_ID, CLUSTER_STATE, ENTITY_CREATOR, workloadCategory, workloadSource, workloadType } from "./vocabulary.js";

type Json = Record<string, unknown>;

export function cluster(cp: ControlPlane): Json {
  const created = cp.iso(0);
  return {
    uuid: cp.blueprint.cluster.clusterId,
    tenantId: API_TENANT_ID,
    name: cp.blueprint.cluster.name,
    createdAt: created,
    updatedAt: created,
    status: { state: CLUSTER_STATE },
    lastLiveness: cp.iso(cp.view.now),
  };
}

export function nodePool(cp: ControlPlane, slot: PoolSlot): Json {
  const created = cp.iso(0);
  const schedulable = slot.nodes.some((n) => cp.index.nodes[n]?.node.status === "ready");
  return {
    id: slot.id,
    name: slot.pool.name,
    labelKey: slot.pool.spec.nodeLabel.key,
    labelValue: slot.pool.spec.nodeLabel.value,
    clusterId: cp.blueprint.cluster.clusterId,
    clusterName: cp.blueprint.cluster.name,
    tenantId: API_TENANT_ID,
    createdBy: ENTITY_CREATOR,
    createdAt: created,
    updatedBy: ENTITY_CREATOR,
    updatedAt: created,
    // Run:ai names the node pool every cluster starts with "default".
    isDefault: slot.pool.name === "default",
    phase: schedulable ? "Ready" : "Unschedulable",
    status: { nodes: slot.nodes.map((n) => cp.index.nodes[n]?.node.name as string) },
  };
}

export function node(cp: ControlPlane, slot: NodeSlot): Json {
  const { node: n, pool } = slot;
  const ready = n.status !== "rebooting";
  return {
    id: slot.id,
    name: n.name,
    clusterUuid: cp.blueprint.cluster.clusterId,
    nodePool: pool.name,
    status: ready ? "Ready" : "NotReady",
    createdAt: cp.iso(0),
    updatedAt: cp.iso(n.bootedAt),
    gpuInfo: { gpuType: pool.model.product, gpuCount: n.gpus.length },
    // A cordoned node carries the taint `kubectl cordon` sets (Kubernetes well-known taints).
    ...(n.status === "cordoned" ? { taints: [{ key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" }] } : {}),
  };
}

/** Per-node-pool quota entries of a project or department (schema Resources). */
function resources(cp: ControlPlane, unit: OrgUnit): Json[] {
  return unit.queues.map((q) => {
    const queue = cp.index.queues[q];
    const pool = cp.index.poolByName(queue?.pool ?? "");
    return {
      nodePool: { id: pool?.id ?? "", name: queue?.pool ?? "" },
      gpu: {
        deserved: queue?.deserved ?? 0,
        limit: queue === undefined || queue.limit < 0 ? null : queue.limit,
        overQuotaWeight: queue?.overQuotaWeight ?? null,
      },
    };
  });
}

/** Allocated, non-preemptible and requested GPUs: in total and per node pool (schemas QuotaStatus, QuotaStatusNodePool). */
function quotaStatus(cp: ControlPlane, unit: OrgUnit): Json {
  const perPool = unit.queues.map((q) => {
    const queue = cp.index.queues[q];
    const pool = cp.index.poolByName(queue?.pool ?? "");
    return {
      nodePoolName: queue?.pool ?? "",
      nodePoolId: pool?.id ?? "",
      allocated: { gpu: cp.now.queueAllocated[q] ?? 0 },
      allocatedNonPreemptible: { gpu: cp.now.queueAllocatedNonPreemptible[q] ?? 0 },
      requested: { gpu: queue?.requested ?? 0 },
    };
  });
  const sum = (pick: (p: (typeof perPool)[number]) => number) => perPool.reduce((s, p) => s + pick(p), 0);
  return {
    nodePoolQuotaStatuses: perPool,
    quotaStatus: {
      allocated: { gpu: sum((p) => p.allocated.gpu) },
      allocatedNonPreemptible: { gpu: sum((p) => p.allocatedNonPreemptible.gpu) },
      requested: { gpu: sum((p) => p.requested.gpu) },
    },
  };
}

function totalGpuQuota(cp: ControlPlane, unit: OrgUnit): number {
  return unit.queues.reduce((sum, q) => sum + (cp.index.queues[q]?.deserved ?? 0), 0);
}

/** What projects and departments share: identity, creation and total GPU quota (no CPU or memory quotas are simulated). */
function orgUnitFields(cp: ControlPlane, unit: OrgUnit): Json {
  const created = cp.iso(0);
  return {
    id: unit.id,
    name: unit.name,
    clusterId: cp.blueprint.cluster.clusterId,
    description: "",
    createdAt: created,
    updatedAt: created,
    totalResources: { gpuQuota: totalGpuQuota(cp, unit), cpuQuota: null, memoryQuota: null },
  };
}

export function project(cp: ControlPlane, unit: OrgUnit): Json {
  return {
    ...orgUnitFields(cp, unit),
    parentId: unit.parentId,
    enforceRunaiScheduler: true,
    effective: {},
    // Run:ai projects are namespaces named runai-<project> (the same rule the simulation uses).
    status: { namespace: projectNamespace(unit.name), phase: "Ready", ...quotaStatus(cp, unit) },
    resources: resources(cp, unit),
  };
}

export function department(cp: ControlPlane, unit: OrgUnit): Json {
  return {
    ...orgUnitFields(cp, unit),
    status: quotaStatus(cp, unit),
    resources: resources(cp, unit),
  };
}

export function workload(cp: ControlPlane, w: WorkloadRecord): Json {
  const { index } = cp;
  const now = cp.view.now;
  const times = WorkloadLedger.times(w, now);
  const running = w.pods.filter((p) => p.deletedAt === null && p.phase === "Running").length;
  const pods = w.pods.filter((p) => p.deletedAt === null).length || 1;
  return {
    id: w.ref.uid,
    name: w.ref.name,
    type: workloadType(w.ref.type),
    category: workloadCategory(w.ref.type),
    source: workloadSource(),
    tenantId: API_TENANT_ID,
    clusterId: cp.blueprint.cluster.clusterId,
    projectName: w.ref.project,
    projectId: index.projects.find((p) => p.name === w.ref.project)?.id ?? "",
    departmentName: w.ref.department,
    departmentId: index.departments.find((d) => d.name === w.ref.department)?.id ?? "",
    namespace: w.ref.namespace,
    submittedBy: w.ref.user,
    priority: w.ref.priority,
    priorityClassName: w.ref.priorityClass,
    preemptible: w.ref.preemptible,
    createdAt: cp.iso(w.submittedAt),
    updatedAt: cp.iso(Math.max(w.phaseUpdatedAt, w.deletedAt ?? 0)),
    deletedAt: w.deletedAt === null ? null : cp.iso(w.deletedAt),
    phase: w.phase,
    phaseUpdatedAt: cp.iso(w.phaseUpdatedAt),
    // The spec's phaseReason is a non-nullable enum: absent unless a quota reason holds the workload.
    ...(w.phase === "Pending" && w.phaseReason !== null ? { phaseReason: w.phaseReason } : {}),
    k8sPhase: w.k8sPhase,
    k8sPhaseUpdatedAt: cp.iso(w.phaseUpdatedAt),
    conditions: [],
    runningPods: running,
    requestedPods: { number: pods },
    requestedNodePools: w.requestedNodePools,
    currentNodePools: w.currentPool === null ? [] : [w.currentPool],
    completedAt: w.completedAt === null ? null : cp.iso(w.completedAt),
    ...(w.ref.image === undefined ? {} : { images: [w.ref.image] }),
    ...(w.ref.type === "distributed-training" ? { distributedFramework: "PyTorch" } : {}),
    podsRequestedResources: { gpu: { request: w.ref.gpus / pods } },
    workloadRequestedResources: { gpu: { request: w.ref.gpus } },
    allocatedResources: { gpu: w.phase === "Running" ? w.ref.gpus : 0 },
    totalPendingTimeSeconds: Math.floor(times.pendingMs / 1000),
    totalRunningTimeSeconds: Math.floor(times.runningMs / 1000),
  };
}

export function pod(cp: ControlPlane, p: PodRecord, verbose: boolean): Json {
  const w = p.workload;
  const livePods = w.pods.filter((q) => q.deletedAt === null).length;
  return {
    id: p.uid,
    name: p.name,
    workloadId: w.ref.uid,
    clusterId: cp.blueprint.cluster.clusterId,
    projectId: cp.index.projects.find((u) => u.name === w.ref.project)?.id ?? "",
    tenantId: API_TENANT_ID,
    priorityClassName: w.ref.priorityClass,
    nodeName: p.node,
    currentNodePool: p.pool,
    requestedNodePools: w.requestedNodePools,
    createdAt: cp.iso(p.createdAt),
    completedAt: p.completedAt === null ? null : cp.iso(p.completedAt),
    deletedAt: p.deletedAt === null ? null : cp.iso(p.deletedAt),
    updatedAt: cp.iso(Math.max(p.phaseUpdatedAt, p.deletedAt ?? 0)),
    k8sPhase: p.phase,
    k8sPhaseUpdatedAt: cp.iso(p.phaseUpdatedAt),
    containers:
      w.ref.image === undefined
        ? []
        : [
            {
              name: containerName(w.ref.type, w.ref.name),
              image: w.ref.image,
              startedAt: p.startedAt === null ? null : cp.iso(p.startedAt),
            },
          ],
    requestedResources: { gpu: { request: w.ref.gpus / Math.max(1, livePods) } },
    allocatedResources: { gpu: p.gpus.length },
    ...(verbose ? { projectName: w.ref.project, workloadName: w.ref.name } : {}),
  };
}
