/**
 * The Run:ai control-plane API against its pinned 2.24 spec, on a real run of the lab blueprint:
 * every served operation is the spec's (path, method, operationId, enums), every answer to a
 * good request validates against the spec's response schema, every bad request of the table
 * gets the status and Error body the spec declares — and the Metrics API's numbers are the ones
 * the Run:ai Prometheus families carried at the same instant.
 */
import { fileURLToPath } from "node:url";
import { type Blueprint, loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, runaiApi, type Sample, samplesKept } from "@gpusynth/constructs";
import { beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, handle, ROUTES } from "../src/api-server/routes.js";
import { describeWithSpec, loadRunaiSpec, type RunaiSpec } from "./runai-spec.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const MINUTE = 60_000;
/** From Monday midnight to the afternoon, when the lab is busy; the API keeps the last RETENTION_HOURS. */
const RUN_HOURS = 14;
const RETENTION_HOURS = 6;
const MIB = 2 ** 20;

interface Run {
  readonly blueprint: Blueprint;
  readonly cp: runaiApi.ControlPlane;
  /** The Run:ai families' samples of each scrape, by stamped time. */
  readonly scrapes: Map<number, Sample[]>;
}

/** The lab, observed by a control plane and scraped every minute, as a live run does. */
function simulate(): Run {
  const { blueprint } = loadBlueprint(repo("blueprints/lab.yaml"));
  const retentionMs = RETENTION_HOURS * 60 * MINUTE;
  const runMs = RUN_HOURS * 60 * MINUTE;
  // Run:ai's exporter alone: the API is compared with its families.
  const run = new ClusterRun(blueprint, {
    seed: 11,
    controlPlane: { retentionMs, stepMs: runaiApi.snapshotStep(retentionMs, MINUTE) },
    sources: ["runai"],
  });
  const cp = run.controlPlane as runaiApi.ControlPlane;
  const scrapes = new Map<number, Sample[]>();
  drive(run, every(MINUTE, { toMs: runMs }), (frame) => {
    const t = frame.simulatedMs;
    if (t > runMs - retentionMs)
      scrapes.set(
        cp.stamp(t),
        samplesKept(frame.targets.flatMap((target) => target.samples.filter((s) => s.family.name.startsWith("runai_")))),
      );
  });
  return { blueprint, cp, scrapes };
}

describeWithSpec("the control-plane API against the pinned Run:ai spec", () => {
  let run: Run;
  let spec: RunaiSpec;
  beforeAll(async () => {
    run = simulate();
    spec = await loadRunaiSpec();
  });

  type Query = Readonly<Record<string, string | readonly string[]>>;
  /** A query with repeated keys for array values. */
  const searchParams = (query: Query): URLSearchParams => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) for (const v of typeof value === "string" ? [value] : value) params.append(key, v);
    return params;
  };
  const get = (path: string, query: Query = {}): ApiResponse => handle(run.cp, { method: "GET", path, query: searchParams(query) });
  const body = <T>(response: ApiResponse): T => response.body as T;
  const iso = (ms: number) => new Date(ms).toISOString();

  interface Entity {
    id: string;
    name: string;
  }

  /** Good requests covering every route, with ids read from the API itself. */
  function goodRequests(): Array<{ path: string; query?: Record<string, string | string[]> }> {
    const cluster = run.blueprint.cluster.clusterId;
    const end = Math.max(...run.scrapes.keys());
    const window = { start: iso(end - 2 * 60 * MINUTE), end: iso(end), numberOfSamples: "12" };
    const served = (table: object) => Object.keys(table);
    const pools = body<{ nodepools: Entity[] }>(get("/api/v1/node-pools")).nodepools;
    const nodes = body<{ nodes: Entity[] }>(get("/api/v1/nodes")).nodes;
    const projects = body<{ projects: Entity[] }>(get("/api/v1/org-unit/projects")).projects;
    const departments = body<{ departments: Entity[] }>(get("/api/v1/org-unit/departments")).departments;
    const workloads = body<{ workloads: Array<Entity & { phase: string }> }>(get("/api/v1/workloads", { limit: "500" })).workloads;
    const running = workloads.find((w) => w.phase === "Running");
    if (running === undefined || pools[0] === undefined || nodes[0] === undefined) throw new Error("the lab run has nothing running");
    const pods = body<{ pods: Entity[] }>(get(`/api/v1/workloads/${running.id}/pods`)).pods;
    const telemetry = (path: string, types: readonly string[], groupBy: readonly string[]) =>
      types.flatMap((telemetryType) => [
        { path, query: { telemetryType } },
        ...groupBy.map((g) => ({ path, query: { telemetryType, groupBy: [g] } })),
        { path, query: { telemetryType, groupBy: groupBy.slice(0, 2) } },
      ]);
    return [
      { path: "/api/v1/clusters" },
      { path: "/api/v1/clusters", query: { verbosity: "full" } },
      { path: `/api/v1/clusters/${cluster}` },
      { path: `/api/v1/clusters/${cluster}/metrics`, query: { ...window, metricType: served(runaiApi.CLUSTER_METRICS) } },
      { path: `/api/v1/clusters/${cluster}/metrics`, query: { ...window, metricType: [...runaiApi.METRICS_TYPE] } },
      { path: `/api/v1/clusters/${cluster}/metrics`, query: { ...window, metricType: ["ALLOCATED_GPU"], groupBy: "Nodepool" } },
      { path: `/api/v1/clusters/${cluster}/metrics`, query: { ...window, metricType: ["TOTAL_GPU"], nodepoolName: pools[0].name } },
      { path: `/api/v1/clusters/${cluster}/nodepools/${pools[0].name}/metrics`, query: { ...window, metricType: ["GPU_UTILIZATION"] } },
      { path: "/api/v1/node-pools" },
      { path: "/api/v1/node-pools", query: { filterBy: [`name==${pools[0].name}`], sortBy: "name", sortOrder: "desc" } },
      { path: `/api/v1/node-pools/${pools[0].id}` },
      { path: "/api/v1/nodes", query: { limit: "2", offset: "1", sortBy: "name" } },
      { path: `/api/v1/nodes/${nodes[0].id}/metrics`, query: { ...window, metricType: served(runaiApi.NODE_METRICS) } },
      { path: `/api/v1/nodes/${nodes[0].id}/metrics`, query: { ...window, metricType: ["GPU_UTILIZATION", "CPU_USAGE_CORES"] } },
      ...telemetry("/api/v1/nodes/telemetry", served(runaiApi.NODE_TELEMETRY), runaiApi.NODE_TELEMETRY_GROUP_BY),
      { path: "/api/v1/org-unit/projects", query: { sortBy: "gpuAllocated", sortOrder: "desc" } },
      ...projects.map((p) => ({ path: `/api/v1/org-unit/projects/${p.id}` })),
      ...projects.map((p) => ({
        path: `/api/v1/org-unit/projects/${p.id}/metrics`,
        query: { ...window, metricType: served(runaiApi.ORG_UNIT_METRICS) },
      })),
      ...telemetry("/api/v1/org-unit/projects/telemetry", served(runaiApi.PROJECT_TELEMETRY), runaiApi.PROJECT_TELEMETRY_GROUP_BY),
      { path: "/api/v1/org-unit/departments" },
      ...departments.map((d) => ({ path: `/api/v1/org-unit/departments/${d.id}` })),
      ...departments.map((d) => ({
        path: `/api/v1/org-unit/departments/${d.id}/metrics`,
        query: { ...window, metricType: [...runaiApi.ORG_UNIT_METRIC_TYPE] },
      })),
      ...telemetry("/api/v1/org-unit/departments/telemetry", served(runaiApi.DEPARTMENT_TELEMETRY), runaiApi.DEPARTMENT_TELEMETRY_GROUP_BY),
      ...telemetry("/api/v1/workloads/telemetry", served(runaiApi.WORKLOAD_TELEMETRY), runaiApi.WORKLOAD_TELEMETRY_GROUP_BY),
      { path: "/api/v1/workloads/telemetry", query: { telemetryType: "WORKLOADS_COUNT", filterByPhases: ["Running", "Pending"] } },
      { path: "/api/v1/workloads/count" },
      { path: "/api/v1/workloads/count", query: { filterBy: ["phase==Running"] } },
      { path: "/api/v1/workloads", query: { deleted: "true" } },
      { path: "/api/v1/workloads", query: { filterBy: ["phase==Pending"], sortBy: "createdAt" } },
      ...workloads.slice(0, 40).map((w) => ({ path: `/api/v1/workloads/${w.id}` })),
      { path: "/api/v1/workloads/pods", query: { limit: "500" } },
      { path: "/api/v1/workloads/pods", query: { completed: "true", verbosity: "full" } },
      { path: `/api/v1/workloads/${running.id}/pods` },
      { path: `/api/v1/workloads/${running.id}/metrics`, query: { ...window, metricType: [...runaiApi.WORKLOAD_METRIC_TYPE] } },
      ...pods.map((p) => ({
        path: `/api/v1/workloads/${running.id}/pods/${p.id}/metrics`,
        query: { ...window, metricType: served(runaiApi.POD_METRICS) },
      })),
    ];
  }

  describe("the served surface is the pinned spec's", () => {
    it("every route is a GET operation of the spec at the same path, under the same operationId", () => {
      for (const route of ROUTES) expect(spec.document.paths[route.path]?.get?.operationId, route.path).toBe(route.operationId);
    });

    it("every enum gpusynth accepts is the spec's, in its order", () => {
      const enumOf = (path: string, name: string): unknown => {
        const parameters = (spec.document.paths[path]?.get?.parameters ?? []).map((p) => resolve(spec, p));
        const parameter = parameters.find((p) => (p as { name?: string }).name === name) as { schema: unknown } | undefined;
        const schema = resolve(spec, parameter?.schema) as { enum?: unknown; items?: unknown };
        return schema.enum ?? (resolve(spec, schema.items) as { enum?: unknown }).enum;
      };
      const cluster = "/api/v1/clusters/{clusterUuid}/metrics";
      expect(runaiApi.METRICS_TYPE).toEqual(enumOf(cluster, "metricType"));
      expect(runaiApi.CLUSTER_METRICS_GROUP_BY).toEqual(enumOf(cluster, "groupBy"));
      expect(runaiApi.NODE_METRIC_TYPE).toEqual(enumOf("/api/v1/nodes/{nodeId}/metrics", "metricType"));
      expect(runaiApi.WORKLOAD_METRIC_TYPE).toEqual(enumOf("/api/v1/workloads/{workloadId}/metrics", "metricType"));
      expect(runaiApi.POD_METRIC_TYPE).toEqual(enumOf("/api/v1/workloads/{workloadId}/pods/{podId}/metrics", "metricType"));
      expect(runaiApi.ORG_UNIT_METRIC_TYPE).toEqual(enumOf("/api/v1/org-unit/projects/{projectId}/metrics", "metricType"));
      expect(runaiApi.NODE_TELEMETRY_TYPE).toEqual(enumOf("/api/v1/nodes/telemetry", "telemetryType"));
      expect(runaiApi.NODE_TELEMETRY_GROUP_BY).toEqual(enumOf("/api/v1/nodes/telemetry", "groupBy"));
      expect(runaiApi.WORKLOAD_TELEMETRY_TYPE).toEqual(enumOf("/api/v1/workloads/telemetry", "telemetryType"));
      expect(runaiApi.WORKLOAD_TELEMETRY_GROUP_BY).toEqual(enumOf("/api/v1/workloads/telemetry", "groupBy"));
      expect(runaiApi.PHASES).toEqual(enumOf("/api/v1/workloads/telemetry", "filterByPhases"));
      expect(runaiApi.ORG_UNIT_TELEMETRY_TYPE).toEqual(enumOf("/api/v1/org-unit/projects/telemetry", "telemetryType"));
      expect(runaiApi.PROJECT_TELEMETRY_GROUP_BY).toEqual(enumOf("/api/v1/org-unit/projects/telemetry", "groupBy"));
      expect(runaiApi.DEPARTMENT_TELEMETRY_GROUP_BY).toEqual(enumOf("/api/v1/org-unit/departments/telemetry", "groupBy"));
    });
  });

  describe("answers to good requests", () => {
    it("cover every route, and each validates against the spec's schema for its status", () => {
      const requests = goodRequests();
      const covered = new Set<string>();
      const problems: string[] = [];
      for (const { path, query } of requests) {
        const operationId = spec.operationOf(path);
        if (operationId === undefined) throw new Error(`${path} is no operation of the spec`);
        covered.add(operationId);
        const url = `${path}?${searchParams(query ?? {})}`;
        const requestErrors = spec.requestErrors(path, searchParams(query ?? {}));
        if (requestErrors.length > 0) problems.push(`request ${url} is invalid per the spec: ${requestErrors.join("; ")}`);
        const response = get(path, query);
        if (response.status !== 200 && response.status !== 207)
          problems.push(`${url}: ${response.status} ${JSON.stringify(response.body)}`);
        for (const error of spec.responseErrors(operationId, response.status, response.body))
          problems.push(`${url} (${response.status}): ${error}`);
      }
      expect(problems).toEqual([]);
      expect([...covered].sort()).toEqual(ROUTES.map((r) => r.operationId).sort());
    });

    it("name the metric types they do not emulate in a Warning header, with 207 and the others' measurements", () => {
      const end = iso(Math.max(...run.scrapes.keys()));
      const response = get(`/api/v1/clusters/${run.blueprint.cluster.clusterId}/metrics`, {
        start: end,
        end,
        metricType: ["TOTAL_GPU", "CPU_UTILIZATION"],
      });
      expect(response.status).toBe(207);
      expect(response.headers?.warning).toMatch(/^299 gpusynth ".*CPU_UTILIZATION.*"$/);
      const { measurements } = body<{ measurements: Array<{ type: string; values: unknown[] }> }>(response);
      expect(measurements.map((m) => m.type)).toEqual(["TOTAL_GPU"]);
      expect(measurements[0]?.values).toHaveLength(20);
    });

    it("return numberOfSamples evenly spaced samples from start to end", () => {
      const end = Math.max(...run.scrapes.keys());
      const response = get(`/api/v1/clusters/${run.blueprint.cluster.clusterId}/metrics`, {
        start: iso(end - 60 * MINUTE),
        end: iso(end),
        numberOfSamples: "5",
        metricType: "TOTAL_GPU",
      });
      const values = body<{ measurements: Array<{ values: Array<{ timestamp: string }> }> }>(response).measurements[0]?.values;
      expect(values?.map((v) => v.timestamp)).toEqual([60, 45, 30, 15, 0].map((m) => iso(end - m * MINUTE)));
    });
  });

  describe("bad requests get the spec's error responses", () => {
    const cluster = () => run.blueprint.cluster.clusterId;
    const node = () => body<{ nodes: Entity[] }>(get("/api/v1/nodes")).nodes[0]?.id as string;
    const window = () => {
      const end = Math.max(...run.scrapes.keys());
      return { start: iso(end - 60 * MINUTE), end: iso(end) };
    };
    /** specRejects: the spec's own parameter schemas already rule the request out (else only its semantics do). */
    const table: Array<{
      what: string;
      path: () => string;
      query: () => Record<string, string | string[]>;
      status: number;
      specRejects: boolean;
    }> = [
      {
        what: "unknown metricType",
        path: () => `/api/v1/clusters/${cluster()}/metrics`,
        query: () => ({ ...window(), metricType: "GPU_TEMPERATURE" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "metricType of another scope",
        path: () => `/api/v1/clusters/${cluster()}/metrics`,
        query: () => ({ ...window(), metricType: "GPU_UTILIZATION_PER_GPU" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "no metricType",
        path: () => `/api/v1/nodes/${node()}/metrics`,
        query: () => window(),
        status: 400,
        specRejects: true,
      },
      {
        what: "no start",
        path: () => `/api/v1/clusters/${cluster()}/metrics`,
        query: () => ({ end: window().end, metricType: "TOTAL_GPU" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "no end",
        path: () => `/api/v1/clusters/${cluster()}/metrics`,
        query: () => ({ start: window().start, metricType: "TOTAL_GPU" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "start that is no date-time",
        path: () => `/api/v1/clusters/${cluster()}/metrics`,
        query: () => ({ ...window(), start: "yesterday", metricType: "TOTAL_GPU" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "start after end",
        path: () => `/api/v1/clusters/${cluster()}/metrics`,
        query: () => ({ start: window().end, end: window().start, metricType: "TOTAL_GPU" }),
        status: 400,
        specRejects: false,
      },
      {
        what: "numberOfSamples above 1000",
        path: () => `/api/v1/clusters/${cluster()}/metrics`,
        query: () => ({ ...window(), metricType: "TOTAL_GPU", numberOfSamples: "1001" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "negative numberOfSamples",
        path: () => `/api/v1/clusters/${cluster()}/metrics`,
        query: () => ({ ...window(), metricType: "TOTAL_GPU", numberOfSamples: "-1" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "groupBy the spec does not list",
        path: () => `/api/v1/clusters/${cluster()}/metrics`,
        query: () => ({ ...window(), metricType: "TOTAL_GPU", groupBy: "Node" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "cluster id that is no uuid",
        path: () => "/api/v1/clusters/lab/metrics",
        query: () => ({ ...window(), metricType: "TOTAL_GPU" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "unknown cluster",
        path: () => "/api/v1/clusters/00000000-0000-4000-8000-000000000000",
        query: () => ({}),
        status: 404,
        specRejects: false,
      },
      {
        what: "unknown node pool",
        path: () => `/api/v1/clusters/${cluster()}/nodepools/no-such-pool/metrics`,
        query: () => ({ ...window(), metricType: "TOTAL_GPU" }),
        status: 404,
        specRejects: false,
      },
      {
        what: "unknown node",
        path: () => "/api/v1/nodes/00000000-0000-4000-8000-000000000000/metrics",
        query: () => ({ ...window(), metricType: "GPU_UTILIZATION" }),
        status: 404,
        specRejects: false,
      },
      {
        what: "unknown workload",
        path: () => "/api/v1/workloads/00000000-0000-4000-8000-000000000000",
        query: () => ({}),
        status: 404,
        specRejects: false,
      },
      {
        what: "workload id that is no uuid",
        path: () => "/api/v1/workloads/train-1/metrics",
        query: () => ({ ...window(), metricType: "GPU_ALLOCATION" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "unknown project",
        path: () => "/api/v1/org-unit/projects/999999",
        query: () => ({}),
        status: 404,
        specRejects: false,
      },
      {
        what: "unknown telemetryType",
        path: () => "/api/v1/workloads/telemetry",
        query: () => ({ telemetryType: "GPU_TEMPERATURE" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "no telemetryType",
        path: () => "/api/v1/nodes/telemetry",
        query: () => ({}),
        status: 400,
        specRejects: true,
      },
      {
        what: "three groupBy keys (the spec allows two)",
        path: () => "/api/v1/workloads/telemetry",
        query: () => ({ telemetryType: "WORKLOADS_COUNT", groupBy: ["Phase", "Nodepool", "ClusterId"] }),
        status: 400,
        specRejects: true,
      },
      {
        what: "filterBy on a field the list does not have",
        path: () => "/api/v1/workloads",
        query: () => ({ filterBy: ["colour==blue"] }),
        status: 400,
        specRejects: true,
      },
      {
        what: "limit above 500",
        path: () => "/api/v1/workloads",
        query: () => ({ limit: "501" }),
        status: 400,
        specRejects: true,
      },
      {
        what: "sortOrder that is neither asc nor desc",
        path: () => "/api/v1/nodes",
        query: () => ({ sortOrder: "sideways" }),
        status: 400,
        specRejects: true,
      },
    ];

    it.each(table)("$what → $status", ({ path, query, status, specRejects }) => {
      const response = get(path(), query());
      expect(response.status, JSON.stringify(response.body)).toBe(status);
      expect(body<{ code: number; message: string }>(response)).toMatchObject({ code: status, message: expect.any(String) });
      const operationId = spec.operationOf(path());
      expect(operationId).toBeDefined();
      // Some list operations declare no 400; their bad requests still get the Error body.
      const errors = spec.declares(operationId as string, status)
        ? spec.responseErrors(operationId as string, status, response.body)
        : spec.schemaErrors("Error", response.body);
      expect(errors).toEqual([]);
      const requestErrors = spec.requestErrors(path(), searchParams(query()));
      expect(requestErrors.length > 0, requestErrors.join("; ")).toBe(specRejects);
    });

    it("paths the spec does not have are 404, methods other than GET 405, with the Error body", () => {
      const missing = get("/api/v1/clusters/x/y/z");
      expect(missing.status).toBe(404);
      expect(body<{ code: number }>(missing).code).toBe(404);
      const post = handle(run.cp, { method: "POST", path: "/api/v1/workloads", query: new URLSearchParams() });
      expect(post).toMatchObject({ status: 405, body: { code: 405 } });
    });
  });

  function resolve(spec: RunaiSpec, node: unknown): unknown {
    let value = node as { $ref?: string } | undefined;
    while (value?.$ref !== undefined) {
      value = value.$ref
        .replace(/^#\//, "")
        .split("/")
        .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], spec.document) as { $ref?: string };
    }
    return value;
  }

  describe("the Metrics API agrees with the Run:ai families", () => {
    /** The API's value of one series at one instant (start = end), keyed by its gpu label or "". */
    const at = (path: string, metricType: string, t: number): Map<string, number> => {
      const response = get(path, { start: iso(t), end: iso(t), numberOfSamples: "1", metricType });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const { measurements } = body<{ measurements: Array<{ labels?: { gpu?: string }; values: Array<{ value: string }> }> }>(response);
      const values = new Map<string, number>();
      for (const m of measurements) for (const v of m.values) values.set(m.labels?.gpu ?? "", Number(v.value));
      return values;
    };

    it("at scrape times across the retention: per GPU, node, workload, pod, project and cluster", () => {
      const cluster = run.blueprint.cluster.clusterId;
      const nodes = body<{ nodes: Entity[] }>(get("/api/v1/nodes", { limit: "500" })).nodes;
      const projects = body<{ projects: Entity[] }>(get("/api/v1/org-unit/projects")).projects;
      const times = [...run.scrapes.keys()].filter((_, i) => i % 30 === 29);
      const problems: string[] = [];
      const compared = { busyGpus: 0, allocatedWorkloads: 0, pods: 0, projects: 0 };
      const expectSame = (what: string, api: number | undefined, prometheus: number) => {
        if (api === undefined || Math.abs(api - prometheus) > 1e-9) problems.push(`${what}: API ${api}, Prometheus ${prometheus}`);
      };
      for (const t of times) {
        const samples = run.scrapes.get(t) ?? [];
        const family = (name: string) => samples.filter((s) => s.family.name === name);
        const sum = (name: string) => family(name).reduce((total, s) => total + s.value, 0);
        const when = iso(t);
        for (const node of nodes) {
          const path = `/api/v1/nodes/${node.id}/metrics`;
          const util = at(path, "GPU_UTILIZATION_PER_GPU", t);
          const memory = at(path, "GPU_MEMORY_USAGE_BYTES_PER_GPU", t);
          const allocation = at(path, "GPU_ALLOCATION_PER_GPU", t);
          const perGpu = family("runai_gpu_utilization_per_gpu").filter((s) => s.labels.node === node.name);
          if (util.size !== perGpu.length)
            problems.push(`${when} ${node.name}: API reports ${util.size} GPUs, Prometheus ${perGpu.length}`);
          for (const s of perGpu) {
            expectSame(`${when} ${node.name}/${s.labels.gpu} utilisation`, util.get(s.labels.gpu as string), s.value);
            if (s.value > 0) compared.busyGpus++;
          }
          for (const s of family("runai_gpu_memory_used_mebibytes_per_gpu").filter((x) => x.labels.node === node.name))
            expectSame(`${when} ${node.name}/${s.labels.gpu} memory`, memory.get(s.labels.gpu as string), s.value * MIB);
          for (const s of family("runai_allocated_gpu_count_per_gpu").filter((x) => x.labels.node === node.name))
            expectSame(`${when} ${node.name}/${s.labels.gpu} allocation`, allocation.get(s.labels.gpu as string), s.value);
          for (const s of family("runai_gpu_utilization_per_node").filter((x) => x.labels.node === node.name))
            expectSame(`${when} ${node.name} utilisation`, at(path, "GPU_UTILIZATION", t).get(""), s.value);
        }
        for (const s of family("runai_allocated_gpu_count_per_workload")) {
          const path = `/api/v1/workloads/${s.labels.workload_id}/metrics`;
          expectSame(`${when} workload ${s.labels.workload_name} allocation`, at(path, "GPU_ALLOCATION", t).get(""), s.value);
          if (s.value > 0) compared.allocatedWorkloads++;
        }
        for (const s of family("runai_gpu_utilization_per_workload"))
          expectSame(
            `${when} workload ${s.labels.workload_name} utilisation`,
            at(`/api/v1/workloads/${s.labels.workload_id}/metrics`, "GPU_UTILIZATION", t).get(""),
            s.value,
          );
        for (const s of family("runai_gpu_memory_used_mebibytes_per_workload"))
          expectSame(
            `${when} workload ${s.labels.workload_name} memory`,
            at(`/api/v1/workloads/${s.labels.workload_id}/metrics`, "GPU_MEMORY_USAGE_BYTES", t).get(""),
            s.value * MIB,
          );
        for (const s of family("runai_gpu_utilization_per_pod_per_gpu")) {
          const workload = run.cp.workloads.pod(s.labels.pod_uuid as string)?.workload.ref.uid;
          const path = `/api/v1/workloads/${workload}/pods/${s.labels.pod_uuid}/metrics`;
          expectSame(
            `${when} pod ${s.labels.pod_name}/${s.labels.gpu}`,
            at(path, "GPU_UTILIZATION_PER_GPU", t).get(s.labels.gpu as string),
            s.value,
          );
          compared.pods++;
        }
        for (const project of projects) {
          const path = `/api/v1/org-unit/projects/${project.id}/metrics`;
          for (const s of family("runai_allocated_gpu_count_per_project").filter((x) => x.labels.project === project.name)) {
            expectSame(`${when} project ${project.name} allocation`, at(path, "GPU_ALLOCATION", t).get(""), s.value);
            compared.projects++;
          }
          for (const s of family("runai_project_guaranteed_gpus").filter((x) => x.labels.project === project.name))
            expectSame(`${when} project ${project.name} quota`, at(path, "GPU_QUOTA", t).get(""), s.value);
        }
        const clusterPath = `/api/v1/clusters/${cluster}/metrics`;
        expectSame(`${when} cluster GPUs`, at(clusterPath, "TOTAL_GPU", t).get(""), sum("runai_gpu_count_per_node"));
        expectSame(
          `${when} cluster allocated GPUs`,
          at(clusterPath, "ALLOCATED_GPU", t).get(""),
          sum("runai_allocated_gpu_count_per_node"),
        );
      }
      expect(problems.slice(0, 20)).toEqual([]);
      // The comparison is not vacuous: busy GPUs, allocated workloads, pods and projects were compared.
      expect(compared.busyGpus).toBeGreaterThan(0);
      expect(compared.allocatedWorkloads).toBeGreaterThan(0);
      expect(compared.pods).toBeGreaterThan(0);
      expect(compared.projects).toBeGreaterThan(0);
    });

    it("the Telemetry API's current GPU counts are the last scrape's", () => {
      const last = run.scrapes.get(Math.max(...run.scrapes.keys())) ?? [];
      const sum = (name: string) => last.filter((s) => s.family.name === name).reduce((total, s) => total + s.value, 0);
      const telemetry = (telemetryType: string) =>
        body<{ values: Array<{ value: string }> }>(get("/api/v1/nodes/telemetry", { telemetryType })).values.reduce(
          (total, v) => total + Number(v.value),
          0,
        );
      expect(telemetry("TOTAL_GPUS")).toBe(sum("runai_gpu_count_per_node"));
      expect(telemetry("ALLOCATED_GPUS")).toBe(sum("runai_allocated_gpu_count_per_node"));
      expect(telemetry("ALLOCATED_GPUS")).toBeGreaterThan(0);
    });

    it("nothing is answered from before the retention", () => {
      const oldest = Math.min(...run.scrapes.keys());
      const before = oldest - 60 * MINUTE;
      const response = get(`/api/v1/clusters/${run.blueprint.cluster.clusterId}/metrics`, {
        start: iso(before - 60 * MINUTE),
        end: iso(before),
        metricType: "ALLOCATED_GPU",
      });
      expect(body<{ measurements: Array<{ values: unknown[] }> }>(response).measurements[0]?.values).toEqual([]);
    });
  });

  describe("the validator has teeth", () => {
    it("rejects a measurement whose value is a number and whose timestamp is no date-time", () => {
      const broken = { measurements: [{ type: "TOTAL_GPU", values: [{ value: 3, timestamp: "yesterday" }] }] };
      const errors = spec.responseErrors("get_cluster_metrics", 200, broken);
      expect(errors.some((e) => e.includes("/value"))).toBe(true);
      expect(errors.some((e) => e.includes("date-time"))).toBe(true);
    });
  });
});
