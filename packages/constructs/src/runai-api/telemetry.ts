/**
 * The Telemetry API's current values: one number per group, computed from the control plane's
 * latest snapshot (GPUs, queues) and its workload records. One entry per served telemetry type;
 * the spec's other types are not emulated (signals/runai-api.md). Group keys are the groupBy
 * values as requested; a group's value is the grouped object's id and its name its name.
 */

import { nodeCpus, nodeMemoryBytes } from "@gpusynth/blueprint";
import type { WorkloadRecord } from "@gpusynth/sim";
import type { ControlPlane } from "./control-plane.js";
import { FREE, NOT_REPORTING } from "./history.js";
import { workloadCategory, workloadType } from "./vocabulary.js";

export interface Group {
  readonly key: string;
  readonly value: string;
  readonly name?: string;
}

/** Something counted by a telemetry type, with the groups it falls into for each groupBy key. */
interface Item {
  readonly amount: number;
  readonly groups: Readonly<Record<string, Group>>;
}

const MIB = 2 ** 20;

export interface TelemetryValue {
  readonly value: string;
  readonly groups?: Group[];
}

/** Sums items per distinct combination of the requested group keys. */
export function groupSum(items: readonly Item[], groupBy: readonly string[]): TelemetryValue[] {
  if (groupBy.length === 0) return [{ value: String(items.reduce((sum, i) => sum + i.amount, 0)) }];
  const sums = new Map<string, { groups: Group[]; amount: number }>();
  for (const item of items) {
    const groups = groupBy.map((key) => item.groups[key] as Group);
    const k = JSON.stringify(groups.map((g) => g.value));
    const entry = sums.get(k) ?? { groups, amount: 0 };
    entry.amount += item.amount;
    sums.set(k, entry);
  }
  return [...sums.values()].map((e) => ({ value: String(e.amount), groups: e.groups }));
}

export interface NodeFilter {
  readonly nodepoolName?: string;
}

type NodeItems = (cp: ControlPlane, filter: NodeFilter) => Item[];

/** One item per node (or per GPU) in the filter, grouped by ClusterId, Nodepool, Node. */
function perNode(amount: (cp: ControlPlane, node: number) => number): NodeItems {
  return (cp, filter) => {
    const { index } = cp;
    const cluster = clusterGroup(cp, "ClusterId");
    return index.nodes.flatMap((slot, n) =>
      filter.nodepoolName !== undefined && slot.pool.name !== filter.nodepoolName
        ? []
        : [
            {
              amount: amount(cp, n),
              groups: {
                ClusterId: cluster,
                Nodepool: { key: "Nodepool", value: slot.pool.name, name: slot.pool.name },
                Node: { key: "Node", value: slot.id, name: slot.node.name },
              },
            },
          ],
    );
  };
}

function gpuCount(cp: ControlPlane, node: number, test: (holder: number) => boolean): number {
  const snap = cp.now;
  return (cp.index.nodes[node]?.gpus ?? []).filter((g) => test(snap.holder[g] as number)).length;
}

const nodeReady = (cp: ControlPlane, node: number) => cp.index.nodes[node]?.node.status !== "rebooting";

export const NODE_TELEMETRY: Readonly<Record<string, NodeItems>> = {
  TOTAL_GPU_NODES: perNode(() => 1),
  READY_GPU_NODES: perNode((cp, n) => (nodeReady(cp, n) ? 1 : 0)),
  TOTAL_GPUS: perNode((cp, n) => cp.index.nodes[n]?.gpus.length ?? 0),
  READY_GPUS: perNode((cp, n) => gpuCount(cp, n, (h) => h !== NOT_REPORTING)),
  ALLOCATED_GPUS: perNode((cp, n) => gpuCount(cp, n, (h) => h >= 0)),
  FREE_GPUS: perNode((cp, n) => gpuCount(cp, n, (h) => h === FREE)),
  // Idle: allocated and at 0 % utilisation in the latest sample.
  IDLE_ALLOCATED_GPUS: perNode(
    (cp, n) => (cp.index.nodes[n]?.gpus ?? []).filter((g) => (cp.now.holder[g] as number) >= 0 && cp.now.util[g] === 0).length,
  ),
  FULLY_FREE_GPU_NODES: perNode((cp, n) => {
    const gpus = cp.index.nodes[n]?.gpus ?? [];
    return gpus.length > 0 && gpus.every((g) => cp.now.holder[g] === FREE) ? 1 : 0;
  }),
  TOTAL_GPU_MEMORY_BYTES: perNode((cp, n) => {
    const slot = cp.index.nodes[n];
    return slot === undefined ? 0 : gpuCount(cp, n, (h) => h !== NOT_REPORTING) * slot.pool.model.framebufferMiB * MIB;
  }),
  USED_GPU_MEMORY_BYTES: perNode((cp, n) =>
    (cp.index.nodes[n]?.gpus ?? []).reduce((sum, g) => sum + (cp.now.memUsedMiB[g] as number) * MIB, 0),
  ),
  // Capacity as the blueprint declares it (kube-state-metrics' kube_node_status_capacity).
  TOTAL_CPU_CORES: perNode((cp, n) => {
    const spec = cp.index.nodes[n]?.pool.spec;
    return spec === undefined ? 0 : nodeCpus(spec);
  }),
  TOTAL_CPU_MEMORY_BYTES: perNode((cp, n) => {
    const pool = cp.index.nodes[n]?.pool.spec;
    return pool === undefined ? 0 : nodeMemoryBytes(pool);
  }),
};

export interface WorkloadFilter {
  readonly nodepoolName?: string;
  readonly departmentId?: string;
  readonly phases?: readonly string[];
}

type WorkloadItems = (cp: ControlPlane, filter: WorkloadFilter) => Item[];

function perWorkload(amount: (w: WorkloadRecord) => number): WorkloadItems {
  return (cp, filter) => {
    const { index } = cp;
    const cluster = clusterGroup(cp, "ClusterId");
    const items: Item[] = [];
    for (const w of cp.workloads.workloads()) {
      if (w.deletedAt !== null) continue;
      const project = index.projects.find((p) => p.name === w.ref.project);
      const department = index.departments.find((d) => d.name === w.ref.department);
      const pool = w.currentPool;
      if (
        filter.nodepoolName !== undefined &&
        pool !== filter.nodepoolName &&
        !(pool === null && w.requestedNodePools[0] === filter.nodepoolName)
      )
        continue;
      if (filter.departmentId !== undefined && department?.id !== filter.departmentId) continue;
      if (filter.phases !== undefined && !filter.phases.includes(w.phase)) continue;
      items.push({
        amount: amount(w),
        groups: {
          ClusterId: cluster,
          DepartmentId: { key: "DepartmentId", value: department?.id ?? "", name: w.ref.department },
          ProjectId: { key: "ProjectId", value: project?.id ?? "", name: w.ref.project },
          Type: { key: "Type", value: workloadType(w.ref.type) },
          CurrentNodepools: { key: "CurrentNodepools", value: pool ?? "" },
          Phase: { key: "Phase", value: w.phase },
          Category: { key: "Category", value: workloadCategory(w.ref.type) },
        },
      });
    }
    return items;
  };
}

export const WORKLOAD_TELEMETRY: Readonly<Record<string, WorkloadItems>> = {
  WORKLOADS_COUNT: perWorkload(() => 1),
  GPU_ALLOCATION: perWorkload((w) => (w.phase === "Running" ? w.ref.gpus : 0)),
};

export interface OrgFilter {
  /** Node pool, by id (projects) or by name (departments). */
  readonly nodepool?: { id?: string; name?: string };
  readonly departmentId?: string;
}

type OrgItems = (cp: ControlPlane, filter: OrgFilter) => Item[];

/** One item per project (or department) queue: per node pool, grouped by ClusterId / NodepoolId / ParentId. */
function perQueue(kind: "project" | "department", amount: (cp: ControlPlane, queue: number) => number): OrgItems {
  return (cp, filter) => {
    const { index } = cp;
    const units = kind === "project" ? index.projects : index.departments;
    const cluster = clusterGroup(cp, kind === "project" ? "ClusterId" : "CLUSTER_ID");
    return units.flatMap((unit) => {
      if (filter.departmentId !== undefined && (kind === "project" ? unit.parentId : unit.id) !== filter.departmentId) return [];
      return unit.queues.flatMap((q) => {
        const pool = index.poolByName(index.queues[q]?.pool ?? "");
        if (pool === undefined) return [];
        if (filter.nodepool?.id !== undefined && pool.id !== filter.nodepool.id) return [];
        if (filter.nodepool?.name !== undefined && pool.pool.name !== filter.nodepool.name) return [];
        const parent = index.departments.find((d) => d.id === unit.parentId);
        return [
          {
            amount: amount(cp, q),
            groups: {
              ClusterId: cluster,
              CLUSTER_ID: cluster,
              NodepoolId: { key: "NodepoolId", value: pool.id, name: pool.pool.name },
              ParentId: { key: "ParentId", value: unit.parentId ?? "", name: parent?.name ?? "" },
            },
          },
        ];
      });
    });
  };
}

function orgTelemetry(kind: "project" | "department"): Readonly<Record<string, OrgItems>> {
  return {
    GPU_QUOTA: perQueue(kind, (cp, q) => cp.index.queues[q]?.deserved ?? 0),
    GPU_ALLOCATION: perQueue(kind, (cp, q) => cp.now.queueAllocated[q] as number),
    GPU_ALLOCATION_NON_PREEMPTIBLE: perQueue(kind, (cp, q) => cp.now.queueAllocatedNonPreemptible[q] as number),
  };
}

export const PROJECT_TELEMETRY = orgTelemetry("project");
export const DEPARTMENT_TELEMETRY = orgTelemetry("department");

function clusterGroup(cp: ControlPlane, key: string): Group {
  return { key, value: cp.blueprint.cluster.clusterId, name: cp.blueprint.cluster.name };
}
