/**
 * signals/runai-api.md is the user's map of the control-plane API: its endpoint table must be
 * the routes gpusynth serves, and each type table must list the spec's enum in order, marking
 * exactly the types gpusynth computes as served.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { runaiApi } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { ROUTES } from "../src/api-server/routes.js";

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), "utf8");
const doc = read("signals/runai-api.md");

/** Rows `| \`NAME\` | served or not emulated | …` of the section whose heading names the schema. */
function typeTable(schema: string): Array<{ type: string; served: boolean }> {
  const section = doc.split("\n### ").find((s) => s.split("\n")[0]?.includes(`\`${schema}\``));
  if (section === undefined) throw new Error(`signals/runai-api.md has no section for ${schema}`);
  return [...section.matchAll(/^\| `([A-Z0-9_]+)`\s*\| (served|not emulated)\s*\|/gm)].map((m) => ({
    type: m[1] as string,
    served: m[2] === "served",
  }));
}

const TABLES: Array<{ schema: string; enumeration: readonly string[]; served: Array<Readonly<Record<string, unknown>>> }> = [
  { schema: "MetricsType", enumeration: runaiApi.METRICS_TYPE, served: [runaiApi.CLUSTER_METRICS] },
  { schema: "NodeMetricType", enumeration: runaiApi.NODE_METRIC_TYPE, served: [runaiApi.NODE_METRICS] },
  { schema: "WorkloadMetricType", enumeration: runaiApi.WORKLOAD_METRIC_TYPE, served: [runaiApi.WORKLOAD_METRICS] },
  { schema: "PodMetricType", enumeration: runaiApi.POD_METRIC_TYPE, served: [runaiApi.POD_METRICS] },
  { schema: "OrgUnitMetricType", enumeration: runaiApi.ORG_UNIT_METRIC_TYPE, served: [runaiApi.ORG_UNIT_METRICS] },
  { schema: "NodeTelemetryType", enumeration: runaiApi.NODE_TELEMETRY_TYPE, served: [runaiApi.NODE_TELEMETRY] },
  { schema: "WorkloadTelemetryType", enumeration: runaiApi.WORKLOAD_TELEMETRY_TYPE, served: [runaiApi.WORKLOAD_TELEMETRY] },
  {
    schema: "OrgUnitTelemetryType",
    enumeration: runaiApi.ORG_UNIT_TELEMETRY_TYPE,
    served: [runaiApi.PROJECT_TELEMETRY, runaiApi.DEPARTMENT_TELEMETRY],
  },
];

describe("signals/runai-api.md", () => {
  it("lists every served GET endpoint with its operationId, and nothing else", () => {
    const documented = [...doc.matchAll(/^\| `(\/api\/v1\/[^`]+)`\s*\| `([a-z_]+)`\s*\|/gm)]
      .filter((m) => !(m[1] as string).endsWith("/token"))
      .map((m) => `${m[2]} ${m[1]}`);
    expect(documented.sort()).toEqual(ROUTES.map((r) => `${r.operationId} ${r.path}`).sort());
  });

  it.each(TABLES)("lists $schema in the spec's order, served exactly where gpusynth computes it", ({ schema, enumeration, served }) => {
    const rows = typeTable(schema);
    expect(rows.map((r) => r.type)).toEqual([...enumeration]);
    for (const table of served) {
      expect(rows.filter((r) => r.served).map((r) => r.type)).toEqual(enumeration.filter((t) => t in table));
    }
    expect(rows.some((r) => r.served)).toBe(true);
  });

  it("refers only to cantfind.md entries that exist", () => {
    const pending = new Set([...read("cantfind.md").matchAll(/^- PENDING `([^`]+)`/gm)].map((m) => m[1]));
    const referred = [...doc.matchAll(/cantfind\.md `([^`]+)`/g)].map((m) => m[1] as string);
    expect(referred.length).toBeGreaterThan(5);
    expect(referred.filter((id) => !pending.has(id))).toEqual([]);
  });
});
