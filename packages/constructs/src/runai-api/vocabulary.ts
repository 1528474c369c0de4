/**
 * The values gpusynth writes into the control-plane API's objects, with the source of each
 * (signals/runai-api.md, "Values the spec leaves as strings"): the spec's enum member where it
 * has one (WorkloadType, Source, ClusterState), a documented value where it has a free string.
 * Where no source gives a value, gpusynth says so there and in cantfind.md.
 */
import type { WorkloadType } from "@gpusynth/blueprint";

/** The spec's own example tenant id (DisplayedCluster.example.tenantId, TenantId.example). */
export const API_TENANT_ID = 1001;

/** ClusterState: a cluster whose agent reports to the control plane. */
export const CLUSTER_STATE = "Connected";

/** createdBy / updatedBy of objects the blueprint declares: no user created them in this emulation. */
export const ENTITY_CREATOR = "";

/** Workload `type` per simulated kind. */
export function workloadType(type: WorkloadType): string {
  return WORKLOAD_TYPE[type];
}

const WORKLOAD_TYPE: Readonly<Record<WorkloadType, string>> = {
  training: "Training",
  "distributed-training": "Distributed",
  interactive: "Workspace",
  inference: "Inference",
};

/** Workload `category` per simulated kind. */
export function workloadCategory(type: WorkloadType): string {
  return WORKLOAD_CATEGORY[type];
}

const WORKLOAD_CATEGORY: Readonly<Record<WorkloadType, string>> = {
  training: "Train",
  "distributed-training": "Train",
  interactive: "Build",
  inference: "Deploy",
};

/** Workload `source` (schema Source): gpusynth's workloads are submitted through the control plane. */
export function workloadSource(): string {
  return "Control-plane";
}
