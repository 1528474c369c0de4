/**
 * The control-plane API's endpoints, one route per spec operation (operationId in the table):
 * each reads its parameters as the 2.24 spec declares them, finds what the path names (404 when
 * it does not exist) and answers from the ControlPlane. No I/O: the server feeds it requests.
 */
import { runaiApi } from "@gpusynth/constructs";
import type { PodRecord, WorkloadRecord } from "@gpusynth/sim";
import { type ListSpec, list } from "./lists.js";
import { ApiError, Params, uuidParam } from "./params.js";

type ControlPlane = runaiApi.ControlPlane;
const { entities } = runaiApi;

export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
}

export interface ApiResponse {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A route's path parameters in template order, percent-decoded: its pattern matches exactly the
 * template's `{name}` segments, so every parameter a handler's path names is there (the rest empty).
 */
type PathParams = readonly [string, string];

type Handler = (cp: ControlPlane, path: PathParams, params: Params) => ApiResponse;

interface Route {
  readonly operationId: string;
  readonly path: string;
  readonly pattern: RegExp;
  readonly handler: Handler;
}

const ok = (body: unknown): ApiResponse => ({ status: 200, body });

/** `{name}` segments match one path segment; literal routes are listed before parameter ones. */
function route(operationId: string, path: string, handler: Handler): Route {
  const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, "([^/]+)")}$`);
  return { operationId, path, pattern, handler };
}

// ---- lookups: a malformed id is a bad request, an unknown one is not found ----

function clusterOf(cp: ControlPlane, id: string): void {
  if (uuidParam("clusterUuid", id) !== cp.blueprint.cluster.clusterId.toLowerCase()) throw new ApiError(404, `cluster ${id} not found`);
}

/** `name` decoded already: a path parameter by handle(), a query parameter by URLSearchParams. */
function poolNamed(cp: ControlPlane, name: string): runaiApi.PoolSlot {
  const pool = cp.index.poolByName(name);
  if (pool === undefined) throw new ApiError(404, `node pool ${name} not found`);
  return pool;
}

function workloadOf(cp: ControlPlane, id: string): WorkloadRecord {
  const w = cp.workloads.workload(uuidParam("workloadId", id));
  if (w === undefined) throw new ApiError(404, `workload ${id} not found`);
  return w;
}

function podOf(cp: ControlPlane, workloadId: string, podId: string): PodRecord {
  const w = workloadOf(cp, workloadId);
  const pod = cp.workloads.pod(uuidParam("podId", podId));
  if (pod === undefined || pod.workload !== w) throw new ApiError(404, `pod ${podId} of workload ${workloadId} not found`);
  return pod;
}

function orgUnit(units: readonly runaiApi.OrgUnit[], kind: string, id: string): runaiApi.OrgUnit {
  const unit = units.find((u) => u.id === id);
  if (unit === undefined) throw new ApiError(404, `${kind} ${id} not found`);
  return unit;
}

// ---- metrics ----

/** Sample times: numberOfSamples evenly spaced from start to end, both included (one sample: end). */
function timeGrid(params: Params): number[] {
  const start = params.dateTime("start");
  const end = params.dateTime("end");
  if (start > end)
    throw new ApiError(
      400,
      `start: expected a time no later than end (${new Date(end).toISOString()}), found ${new Date(start).toISOString()}`,
    );
  const n = params.integer("numberOfSamples", runaiApi.NUMBER_OF_SAMPLES);
  if (n <= 1) return n === 0 ? [] : [end];
  return Array.from({ length: n }, (_, i) => Math.round(start + ((end - start) * i) / (n - 1)));
}

type Build<S> = (index: runaiApi.ClusterIndex, scope: S) => runaiApi.MeasuredSeries[];

/**
 * Answers a metrics request: 200 with a measurement per series of every requested type, or
 * 207 (the spec's "Partial success") when some requested types are not emulated — named in a
 * Warning header — with the measurements of the others.
 */
function metrics<S>(
  cp: ControlPlane,
  params: Params,
  allowed: readonly string[],
  table: Readonly<Record<string, Build<S>>>,
  scopes: ReadonlyArray<{ scope: S; groups?: Array<{ key: string; value: string }> }>,
): ApiResponse {
  const types = params.enums("metricType", allowed, { required: true });
  const grid = timeGrid(params);
  const missing = types.filter((t) => table[t] === undefined);
  const measurements = types.flatMap((type) => {
    const build = table[type];
    if (build === undefined) return [];
    return scopes.flatMap(({ scope, groups }) =>
      cp.measure(type, build(cp.index, scope), grid).map((m) => (groups === undefined ? m : { ...m, groups })),
    );
  });
  if (missing.length === 0) return ok({ measurements });
  return {
    status: 207,
    body: { measurements },
    headers: { warning: `299 gpusynth "not emulated: ${missing.join(", ")} (see signals/runai-api.md)"` },
  };
}

function clusterScope(cp: ControlPlane, pools: readonly runaiApi.PoolSlot[]): runaiApi.ClusterScope {
  const names = new Set(pools.map((p) => p.pool.name));
  return {
    gpus: pools.flatMap((p) => p.gpus),
    nodes: pools.flatMap((p) => p.nodes),
    projectQueues: cp.index.queues.flatMap((q, i) => (q.level === "project" && names.has(q.pool) ? [i] : [])),
    pools: new Set(pools.map((p) => cp.index.pools.indexOf(p))),
  };
}

function clusterMetrics(cp: ControlPlane, [id]: PathParams, params: Params): ApiResponse {
  clusterOf(cp, id);
  const poolName = params.one("nodepoolName");
  const pools = poolName === undefined ? cp.index.pools : [poolNamed(cp, poolName)];
  const groupBy = params.enum("groupBy", runaiApi.CLUSTER_METRICS_GROUP_BY);
  if (groupBy !== undefined && groupBy !== "Nodepool")
    throw new ApiError(400, `groupBy: gpusynth groups cluster metrics by Nodepool only, found "${groupBy}" (see signals/runai-api.md)`);
  const scopes =
    groupBy === "Nodepool"
      ? pools.map((p) => ({ scope: clusterScope(cp, [p]), groups: [{ key: "Nodepool", value: p.pool.name }] }))
      : [{ scope: clusterScope(cp, pools) }];
  return metrics(cp, params, runaiApi.METRICS_TYPE, runaiApi.CLUSTER_METRICS, scopes);
}

function nodepoolMetrics(cp: ControlPlane, [id, name]: PathParams, params: Params): ApiResponse {
  clusterOf(cp, id);
  const pool = poolNamed(cp, name);
  return metrics(cp, params, runaiApi.METRICS_TYPE, runaiApi.CLUSTER_METRICS, [{ scope: clusterScope(cp, [pool]) }]);
}

function nodeMetrics(cp: ControlPlane, [id]: PathParams, params: Params): ApiResponse {
  const slot = cp.index.nodeById(uuidParam("nodeId", id));
  if (slot === undefined) throw new ApiError(404, `node ${id} not found`);
  return metrics(cp, params, runaiApi.NODE_METRIC_TYPE, runaiApi.NODE_METRICS, [{ scope: cp.index.nodes.indexOf(slot) }]);
}

function orgMetrics(kind: "project" | "department"): Handler {
  return (cp, [id], params) => {
    const unit = orgUnit(kind === "project" ? cp.index.projects : cp.index.departments, kind, id);
    const poolName = params.one("nodepoolName");
    if (poolName !== undefined) poolNamed(cp, poolName);
    const scope: runaiApi.OrgScope = poolName === undefined ? { unit } : { unit, pool: poolName };
    return metrics(cp, params, runaiApi.ORG_UNIT_METRIC_TYPE, runaiApi.ORG_UNIT_METRICS, [{ scope }]);
  };
}

// ---- telemetry ----

function telemetry<F>(
  cp: ControlPlane,
  params: Params,
  allowed: readonly string[],
  groupKeys: readonly string[],
  table: Readonly<Record<string, (cp: ControlPlane, filter: F) => Parameters<typeof runaiApi.groupSum>[0]>>,
  filter: F,
): ApiResponse {
  const type = params.enum("telemetryType", allowed);
  if (type === undefined) throw new ApiError(400, "telemetryType: required parameter is missing");
  const groupBy = params.enums("groupBy", groupKeys, { required: false, max: runaiApi.MAX_GROUP_BY });
  const compute = table[type];
  if (compute === undefined)
    throw new ApiError(400, `telemetryType: ${type} is valid in API 2.24 but gpusynth does not emulate it (see signals/runai-api.md)`);
  const clusterId = params.one("clusterId");
  if (clusterId !== undefined) uuidParam("clusterId", clusterId);
  const items =
    clusterId === undefined || clusterId.toLowerCase() === cp.blueprint.cluster.clusterId.toLowerCase() ? compute(cp, filter) : [];
  return ok({ type, timestamp: cp.iso(cp.view.now), values: runaiApi.groupSum(items, groupBy) });
}

const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

function nodeTelemetry(cp: ControlPlane, _path: PathParams, params: Params): ApiResponse {
  const filter = defined({ nodepoolName: params.one("nodepoolName") });
  return telemetry(cp, params, runaiApi.NODE_TELEMETRY_TYPE, runaiApi.NODE_TELEMETRY_GROUP_BY, runaiApi.NODE_TELEMETRY, filter);
}

function workloadTelemetry(cp: ControlPlane, _path: PathParams, params: Params): ApiResponse {
  const phases = params.enums("filterByPhases", runaiApi.PHASES, { required: false });
  const filter = defined({
    nodepoolName: params.one("nodepoolName"),
    departmentId: params.one("departmentId"),
    phases: phases.length === 0 ? undefined : phases,
  });
  return telemetry(cp, params, runaiApi.WORKLOAD_TELEMETRY_TYPE, runaiApi.WORKLOAD_TELEMETRY_GROUP_BY, runaiApi.WORKLOAD_TELEMETRY, filter);
}

function projectTelemetry(cp: ControlPlane, _path: PathParams, params: Params): ApiResponse {
  const nodepoolId = params.one("nodepoolId");
  const filter = defined({ nodepool: nodepoolId === undefined ? undefined : { id: nodepoolId }, departmentId: params.one("departmentId") });
  return telemetry(cp, params, runaiApi.ORG_UNIT_TELEMETRY_TYPE, runaiApi.PROJECT_TELEMETRY_GROUP_BY, runaiApi.PROJECT_TELEMETRY, filter);
}

function departmentTelemetry(cp: ControlPlane, _path: PathParams, params: Params): ApiResponse {
  const nodepoolName = params.one("nodepoolName");
  const filter = defined({
    nodepool: nodepoolName === undefined ? undefined : { name: nodepoolName },
    departmentId: params.one("departmentId"),
  });
  return telemetry(
    cp,
    params,
    runaiApi.ORG_UNIT_TELEMETRY_TYPE,
    runaiApi.DEPARTMENT_TELEMETRY_GROUP_BY,
    runaiApi.DEPARTMENT_TELEMETRY,
    filter,
  );
}

// ---- lists (filterBy and sortBy fields: the spec's patterns and enums) ----

const AVERAGES = ["24h", "7d", "30d"].flatMap((r) => [`avgGpuAllocation${r}`, `avgGpuUtilization${r}`, `avgGpuMemoryUtilization${r}`]);
const at =
  (...keys: string[]) =>
  (item: Record<string, unknown>) =>
    keys.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], item);

const LISTS = {
  nodepools: {
    fields: [
      "name",
      "clusterId",
      "phase",
      "createdAt",
      "updatedAt",
      "gpuNetworkAccelerationDetection",
      "networkTopologyName",
      "gpuNetworkAccelerationDetected",
      "gpuNetworkAccelerationLabelKey",
      "swapEnabled",
      "nodeLevelSchedulerEnabled",
    ],
    paged: true,
  },
  nodes: {
    fields: ["name", "status", "nodePool", "gpuType", "nvLinkDomainUid", "nvLinkCliqueId", "clusterUuid"],
    read: { gpuType: at("gpuInfo", "gpuType") },
    searchIn: "name",
    paged: true,
  },
  projects: {
    fields: [
      "name",
      "clusterId",
      "departmentId",
      "parentId",
      "parentName",
      "phase",
      "totalGpuQuota",
      "gpuAllocated",
      "createdAt",
      ...AVERAGES,
    ],
    read: {
      departmentId: at("parentId"),
      phase: at("status", "phase"),
      totalGpuQuota: at("totalResources", "gpuQuota"),
      gpuAllocated: at("status", "quotaStatus", "allocated", "gpu"),
    },
    searchIn: "name",
    paged: true,
  },
  departments: {
    fields: ["name", "clusterId", "totalGpuQuota", "gpuAllocated", "createdAt", ...AVERAGES],
    read: { totalGpuQuota: at("totalResources", "gpuQuota"), gpuAllocated: at("status", "quotaStatus", "allocated", "gpu") },
    paged: true,
  },
  workloads: {
    fields: [
      "type",
      "name",
      "clusterId",
      "projectId",
      "projectName",
      "departmentId",
      "departmentName",
      "createdAt",
      "deletedAt",
      "submittedBy",
      "phase",
      "completedAt",
      "nodepool",
      "distributedFramework",
      "allocatedGPU",
      "idleGpus",
      "idleAllocatedGpus",
      "phaseUpdatedAt",
      "category",
      "totalPendingTimeSeconds",
      "totalRunningTimeSeconds",
      "priority",
      "priorityClassName",
      "guaranteedRuntimeEndsAt",
      "aiApplicationId",
      "aiApplicationName",
    ],
    read: { nodepool: at("currentNodePools", "0"), allocatedGPU: at("allocatedResources", "gpu") },
    searchIn: "name",
    paged: true,
  },
  pods: {
    fields: ["clusterId", "workloadId", "revisionId", "nodeName", "currentNodepool", "createdAt", "completedAt", "deletedAt"],
    read: { currentNodepool: at("currentNodePool") },
    searchIn: "name",
    paged: true,
  },
} satisfies Record<string, ListSpec>;

function listed(key: string, items: Record<string, unknown>[], spec: ListSpec, params: Params): ApiResponse {
  const { items: page, next } = list(items, spec, params);
  return ok(next === undefined ? { [key]: page } : { [key]: page, next });
}

function workloadsListed(cp: ControlPlane, params: Params): Record<string, unknown>[] {
  const deleted = params.boolean("deleted") === true;
  return [...cp.workloads.workloads()].filter((w) => (w.deletedAt !== null) === deleted).map((w) => entities.workload(cp, w));
}

function podsListed(cp: ControlPlane, params: Params, workload?: WorkloadRecord): Record<string, unknown>[] {
  const deleted = params.boolean("deleted") === true;
  const completed = params.one("completed") ?? "all";
  if (!["all", "", "true", "false"].includes(completed))
    throw new ApiError(400, `completed: expected true, false or all, found "${completed}"`);
  const verbose = params.enum("verbosity", ["brief", "full"] as const) === "full";
  const workloads = workload === undefined ? [...cp.workloads.workloads()] : [workload];
  return workloads
    .flatMap((w) => w.pods)
    .filter((p) => (p.deletedAt !== null) === deleted)
    .filter((p) => completed === "all" || completed === "" || (p.completedAt !== null) === (completed === "true"))
    .map((p) => entities.pod(cp, p, verbose));
}

export const ROUTES: readonly Route[] = [
  route("get_clusters", "/api/v1/clusters", (cp, _p, params) => {
    params.enum("verbosity", ["metadata", "full"] as const);
    params.boolean("includeRequestedForDelete");
    return ok([entities.cluster(cp)]);
  }),
  route("get_cluster_by_uuid", "/api/v1/clusters/{clusterUuid}", (cp, [id], params) => {
    params.enum("verbosity", ["metadata", "full"] as const);
    clusterOf(cp, id);
    return ok(entities.cluster(cp));
  }),
  route("get_cluster_metrics", "/api/v1/clusters/{clusterUuid}/metrics", clusterMetrics),
  route("get_nodepool_metrics", "/api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics", nodepoolMetrics),
  route("get_nodepools", "/api/v1/node-pools", (cp, _p, params) =>
    listed(
      "nodepools",
      cp.index.pools.map((p) => entities.nodePool(cp, p)),
      LISTS.nodepools,
      params,
    ),
  ),
  route("get_nodepool", "/api/v1/node-pools/{nodepoolId}", (cp, [id]) => {
    const pool = cp.index.pools.find((p) => p.id === id);
    if (pool === undefined) throw new ApiError(404, `node pool ${id} not found`);
    return ok(entities.nodePool(cp, pool));
  }),
  route("get_node_telemetry", "/api/v1/nodes/telemetry", nodeTelemetry),
  route("get_tenant_nodes", "/api/v1/nodes", (cp, _p, params) =>
    listed(
      "nodes",
      cp.index.nodes.map((n) => entities.node(cp, n)),
      LISTS.nodes,
      params,
    ),
  ),
  route("get_node_metrics", "/api/v1/nodes/{nodeId}/metrics", nodeMetrics),
  route("get_projects_telemetry", "/api/v1/org-unit/projects/telemetry", projectTelemetry),
  route("get_projects", "/api/v1/org-unit/projects", (cp, _p, params) =>
    listed(
      "projects",
      cp.index.projects.map((u) => entities.project(cp, u)),
      LISTS.projects,
      params,
    ),
  ),
  route("get_project", "/api/v1/org-unit/projects/{projectId}", (cp, [id]) =>
    ok(entities.project(cp, orgUnit(cp.index.projects, "project", id))),
  ),
  route("get_project_metrics", "/api/v1/org-unit/projects/{projectId}/metrics", orgMetrics("project")),
  route("get_departments_telemetry", "/api/v1/org-unit/departments/telemetry", departmentTelemetry),
  route("get_departments", "/api/v1/org-unit/departments", (cp, _p, params) => {
    params.enum("verbosity", ["meta", "brief", "verbose"] as const);
    return listed(
      "departments",
      cp.index.departments.map((u) => entities.department(cp, u)),
      LISTS.departments,
      params,
    );
  }),
  route("get_department", "/api/v1/org-unit/departments/{departmentId}", (cp, [id]) =>
    ok(entities.department(cp, orgUnit(cp.index.departments, "department", id))),
  ),
  route("get_department_metrics", "/api/v1/org-unit/departments/{departmentId}/metrics", orgMetrics("department")),
  route("get_workloads_telemetry", "/api/v1/workloads/telemetry", workloadTelemetry),
  route("count_workloads", "/api/v1/workloads/count", (cp, _p, params) =>
    ok({ count: list(workloadsListed(cp, params), { ...LISTS.workloads, paged: false }, params).items.length }),
  ),
  route("list_pods", "/api/v1/workloads/pods", (cp, _p, params) => listed("pods", podsListed(cp, params), LISTS.pods, params)),
  route("get_workloads", "/api/v1/workloads", (cp, _p, params) =>
    listed("workloads", workloadsListed(cp, params), LISTS.workloads, params),
  ),
  route("get_workload", "/api/v1/workloads/{workloadId}", (cp, [id]) => ok(entities.workload(cp, workloadOf(cp, id)))),
  route("get_workload_pods", "/api/v1/workloads/{workloadId}/pods", (cp, [id], params) =>
    listed("pods", podsListed(cp, params, workloadOf(cp, id)), { ...LISTS.pods, fields: [] }, params),
  ),
  route("get_workload_metrics", "/api/v1/workloads/{workloadId}/metrics", (cp, [id], params) =>
    metrics(cp, params, runaiApi.WORKLOAD_METRIC_TYPE, runaiApi.WORKLOAD_METRICS, [{ scope: workloadOf(cp, id) }]),
  ),
  route("get_workload_pod_metrics", "/api/v1/workloads/{workloadId}/pods/{podId}/metrics", (cp, [id, podId], params) =>
    metrics(cp, params, runaiApi.POD_METRIC_TYPE, runaiApi.POD_METRICS, [{ scope: podOf(cp, id, podId) }]),
  ),
];

/**
 * A path parameter as the client meant it, percent-decoded (`{nodepoolName}` may hold any
 * character). Escapes that do not decode to UTF-8 (`%C3` alone) are a bad request.
 */
function pathParam(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ApiError(400, `path: expected percent-encoded UTF-8, found "${segment}"`);
  }
}

/** Answers one GET request; errors become the spec's Error body. */
export function handle(cp: ControlPlane, request: ApiRequest): ApiResponse {
  try {
    for (const r of ROUTES) {
      const match = r.pattern.exec(request.path);
      if (match === null) continue;
      if (request.method !== "GET") throw new ApiError(405, `${request.method} ${request.path}: only GET is served here`);
      const [first = "", second = ""] = match.slice(1).map(pathParam);
      return r.handler(cp, [first, second], new Params(request.query));
    }
    throw new ApiError(404, `no such endpoint: ${request.path} (gpusynth serves the endpoints listed in signals/runai-api.md)`);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const body = { code: error.code, message: error.message };
    // RFC 9110 §15.5.6: a 405 names the methods the resource has.
    return error.code === 405 ? { status: 405, body, headers: { allow: "GET" } } : { status: error.code, body };
  }
}
