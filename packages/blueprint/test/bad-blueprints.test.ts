/**
 * A table of broken blueprints, each made by one edit to the shipped lab.yaml: every error
 * must name the YAML path, what was expected and what was found, and carry a line number.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BlueprintError, type BlueprintProblem, formatPath, parseBlueprint } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";
import { type Document, parseDocument } from "yaml";

const labText = readFileSync(fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url)), "utf8");

function problemsAfter(edit: (doc: Document) => void): BlueprintProblem[] {
  const doc = parseDocument(labText);
  edit(doc);
  try {
    parseBlueprint(doc.toString(), "edited-lab.yaml");
  } catch (error) {
    if (error instanceof BlueprintError) return [...error.problems];
    throw error;
  }
  return [];
}

interface Case {
  readonly name: string;
  readonly edit: (doc: Document) => void;
  readonly path: string;
  readonly expected: RegExp;
  readonly found: RegExp;
}

const cases: Case[] = [
  {
    name: "a node role that is no label name",
    edit: (d) => d.setIn(["nodePools", 0, "nodeRoles"], ["runai gpu worker"]),
    path: "nodePools[0].nodeRoles[0]",
    expected: /label name such as runai-gpu-worker/,
    found: /runai gpu worker/,
  },
  {
    name: "a kubelet version that is not one",
    edit: (d) => d.setIn(["nodePools", 0, "software", "kubeletVersion"], "1.30"),
    path: "nodePools[0].software.kubeletVersion",
    expected: /kubelet version such as "v1\.30\.2"/,
    found: /1\.30/,
  },
  {
    name: "kubelets further apart than the version skew policy allows",
    edit: (d) => {
      const old = (d.getIn(["nodePools", 0]) as { toJSON(): Record<string, unknown> }).toJSON();
      d.addIn(["nodePools"], {
        ...old,
        name: "old",
        nodeLabel: { key: "runai/node-pool", value: "old" },
        software: { kubeletVersion: "v1.26.15" },
      });
    },
    path: "nodePools[1].software.kubeletVersion",
    expected: /at most three minor versions older than the newest \(v1\.30\)/,
    found: /"v1\.26\.15"/,
  },
  {
    name: "unknown department",
    edit: (d) => d.setIn(["projects", 0, "department"], "nope"),
    path: "projects[0].department",
    expected: /department declared in departments/,
    found: /"nope"/,
  },
  {
    name: "unknown project",
    edit: (d) => d.setIn(["workloads", 0, "project"], "ghost"),
    path: "workloads[0].project",
    expected: /project declared in projects/,
    found: /"ghost"/,
  },
  {
    name: "limit below deserved quota",
    edit: (d) => d.setIn(["projects", 0, "nodePools", "default", "limit"], 4),
    path: "projects[0].nodePools.default.limit",
    expected: /at least the deserved quota \(8\)/,
    found: /^4$/,
  },
  {
    name: "quota in an unknown node pool",
    edit: (d) => d.setIn(["projects", 0, "nodePools", "nowhere"], { deserved: 0, overQuotaWeight: 1 }),
    path: "projects[0].nodePools.nowhere",
    expected: /node pool declared in nodePools/,
    found: /"nowhere"/,
  },
  {
    name: "a single-pod workload larger than a node",
    edit: (d) => d.setIn(["workloads", 0, "mix", 0, "gpus"], [[16, 100]]),
    path: "workloads[0].mix[0].gpus[0][0]",
    expected: /fits on one node.*distributed-training/,
    found: /^16$/,
  },
  {
    name: "nodes too small for the declared sizes",
    edit: (d) => d.setIn(["nodePools", 0, "gpusPerNode"], 4),
    path: "workloads[0].mix[1].gpus[2][0]",
    expected: /fits on one node/,
    found: /^8$/,
  },
  {
    name: "a gang that cannot split evenly across nodes",
    edit: (d) => d.setIn(["workloads", 0, "mix", 2, "gpus"], [[9, 100]]),
    path: "workloads[0].mix[2].gpus[0][0]",
    expected: /splits evenly/,
    found: /^9$/,
  },
  {
    name: "non-preemptible workload above its project's deserved quota",
    edit: (d) =>
      d.setIn(
        ["submissions"],
        [
          {
            at: "1m",
            name: "x",
            project: d.getIn(["projects", 0, "name"]),
            type: "interactive",
            priorityClass: "build",
            gpus: 16,
            runFor: "1h",
          },
        ],
      ),
    path: "submissions[0].gpus",
    expected: /deserved quota \(non-preemptible\)/,
    found: /^16$/,
  },
  {
    name: "unknown priority class",
    edit: (d) => d.setIn(["workloads", 0, "mix", 0, "priorityClass"], "trian"),
    path: "workloads[0].mix[0].priorityClass",
    expected: /priority class \(train, build-preemptible/,
    found: /"trian"/,
  },
  {
    name: "unknown GPU model",
    edit: (d) => d.setIn(["nodePools", 0, "gpuModel"], "V100"),
    path: "nodePools[0].gpuModel",
    expected: /one of "A100-SXM4-80GB", "H100-80GB-HBM3"/,
    found: /"V100"/,
  },
  {
    name: "misspelt key",
    edit: (d) => d.setIn(["nodePools", 0, "nodez"], 4),
    path: "nodePools[0].nodez",
    expected: /only known keys/,
    found: /unknown key "nodez"/,
  },
  {
    name: "missing key",
    edit: (d) => d.deleteIn(["nodePools", 0, "nodes"]),
    path: "nodePools[0].nodes",
    expected: /a number/,
    found: /key is missing/,
  },
  {
    name: "cluster id not a UUID",
    edit: (d) => d.setIn(["cluster", "clusterId"], "not-a-uuid"),
    path: "cluster.clusterId",
    expected: /valid uuid/,
    found: /"not-a-uuid"/,
  },
  {
    name: "start time not ISO 8601",
    edit: (d) => d.setIn(["time", "start"], "yesterday"),
    path: "time.start",
    expected: /valid datetime/,
    found: /"yesterday"/,
  },
  { name: "negative seed", edit: (d) => d.setIn(["seed"], -1), path: "seed", expected: /at least 0/, found: /^-1$/ },
  {
    name: "duration that is not a duration",
    edit: (d) => d.setIn(["workloads", 0, "mix", 0, "duration", "min"], "5 minutes"),
    path: "workloads[0].mix[0].duration.min",
    expected: /duration such as "90s"/,
    found: /"5 minutes"/,
  },
  {
    name: "CDF out of order",
    edit: (d) =>
      d.setIn(
        ["workloads", 0, "mix", 0, "duration", "cdf"],
        [
          ["1m", 50],
          ["30s", 100],
        ],
      ),
    path: "workloads[0].mix[0].duration.cdf[1][0]",
    expected: /ascending order/,
    found: /^30000$/,
  },
  {
    name: "CDF not reaching 100 %",
    edit: (d) => d.setIn(["workloads", 0, "mix", 0, "gpus"], [[1, 50]]),
    path: "workloads[0].mix[0].gpus[0][1]",
    expected: /reach 100/,
    found: /^50$/,
  },
  {
    name: "failure and cancel above certainty",
    edit: (d) => d.setIn(["workloads", 0, "mix", 0, "cancel", "probability"], 0.9),
    path: "workloads[0].mix[0].cancel.probability",
    expected: /add up to at most 1/,
    found: /^1\.1$/,
  },
  {
    name: "duplicate project name",
    edit: (d) => d.setIn(["projects", 1, "name"], d.getIn(["projects", 0, "name"])),
    path: "projects[1].name",
    expected: /not used before/,
    found: /already at projects\[0\]/,
  },
  {
    name: "fault on an unknown node",
    edit: (d) => d.setIn(["faults", "injections"], [{ at: "1h", node: "missing-node", gpu: 0, xid: 79 }]),
    path: "faults.injections[0].node",
    expected: /node of the blueprint \(names look like default-node-0\)/,
    found: /"missing-node"/,
  },
  {
    name: "fault on a GPU index the node lacks",
    edit: (d) => d.setIn(["faults", "injections"], [{ at: "1h", node: "default-node-0", gpu: 8, xid: 79 }]),
    path: "faults.injections[0].gpu",
    expected: /GPU index below 8/,
    found: /^8$/,
  },
  {
    name: "power cap on a GPU index the node lacks",
    edit: (d) => d.setIn(["faults", "powerCaps"], [{ at: "1h", node: "default-node-0", gpu: 9, watts: 300, for: "1h" }]),
    path: "faults.powerCaps[0].gpu",
    expected: /GPU index below 8/,
    found: /^9$/,
  },
  {
    name: "power cap above the GPU's own limit",
    edit: (d) => d.setIn(["faults", "powerCaps"], [{ at: "1h", node: "default-node-0", gpu: 1, watts: 5000, for: "1h" }]),
    path: "faults.powerCaps[0].watts",
    expected: /a limit from \d+ W to below \d+ W \(the [\w-]+'s power limit\)/,
    found: /^5000$/,
  },
  {
    name: "XID outside the catalogue",
    edit: (d) => d.setIn(["faults", "hazards", 0, "xid"], 999),
    path: "faults.hazards[0].xid",
    expected: /XID from the catalogue/,
    found: /^999$/,
  },
  {
    name: "a scheduling period of zero (the clock would stop)",
    edit: (d) => d.setIn(["time", "schedulingPeriod"], "0ms"),
    path: "time.schedulingPeriod",
    expected: /scheduling period from 100ms to 1m \(KAI-Scheduler's default: 1s\)/,
    found: /^"0ms"$/,
  },
  {
    name: "a scheduling period of hours",
    edit: (d) => d.setIn(["time", "schedulingPeriod"], "2h"),
    path: "time.schedulingPeriod",
    expected: /from 100ms to 1m/,
    found: /^"2h"$/,
  },
  {
    name: "a start before the Unix epoch",
    edit: (d) => d.setIn(["time", "start"], "0001-01-01T00:00:00Z"),
    path: "time.start",
    expected: /from 1970-01-01T00:00:00Z \(OTLP timestamps.*before 2200-01-01T00:00:00Z/,
    found: /"0001-01-01T00:00:00Z"/,
  },
  {
    name: "a start past the end of int64 nanoseconds",
    edit: (d) => d.setIn(["time", "start"], "9999-12-31T00:00:00Z"),
    path: "time.start",
    expected: /2262-04-11 in int64 nanoseconds/,
    found: /"9999-12-31T00:00:00Z"/,
  },
  {
    name: "a node pool larger than one process simulates",
    edit: (d) => d.setIn(["nodePools", 0, "nodes"], 20_000),
    path: "nodePools[0].nodes",
    expected: /at most 16384/,
    found: /^20000$/,
  },
  {
    name: "more GPUs than one blueprint may hold",
    edit: (d) => {
      d.setIn(["nodePools", 0, "nodes"], 16384);
      d.setIn(["nodePools", 0, "gpusPerNode"], 16);
    },
    path: "nodePools",
    expected:
      /at most 131072 GPUs in one blueprint \(every process simulates the whole cluster and emits one shard of it.*split a larger cluster into several blueprints/,
    found: /^262144 GPUs in 1 node pool$/,
  },
  {
    name: "more nodes than one blueprint may hold",
    edit: (d) => {
      const pool = d.getIn(["nodePools", 0]) as { toJSON(): Record<string, unknown> };
      const second = { ...pool.toJSON(), name: "second", nodes: 16300, gpusPerNode: 1, nodeLabel: { key: "pool", value: "second" } };
      d.setIn(["nodePools", 0, "nodes"], 100);
      d.setIn(["nodePools", 1], second);
    },
    path: "nodePools",
    expected: /at most 16384 nodes in one blueprint .*split a larger cluster/,
    found: /^16400 nodes in 2 node pools$/,
  },
  {
    name: "a duration that overflows to Infinity",
    edit: (d) => d.setIn(["workloads", 0, "mix", 0, "duration", "min"], `${"9".repeat(400)}d`),
    path: "workloads[0].mix[0].duration.min",
    expected: /duration of at most 36525d \(100 years\)/,
    found: /^"9{50}/,
  },
  {
    name: "a duration of centuries",
    edit: (d) => d.setIn(["faults", "nodeRebootTime"], "200000d"),
    path: "faults.nodeRebootTime",
    expected: /at most 36525d/,
    found: /"200000d"/,
  },
  {
    name: "a retention outside its range",
    edit: (d) => d.setIn(["controlPlane"], { retention: "90d" }),
    path: "controlPlane.retention",
    expected: /retention between 1m and 31d/,
    found: /"90d"/,
  },
  {
    name: "kube-state-metrics in more shards than a blueprint may run",
    edit: (d) => d.setIn(["telemetry", "kubeStateMetrics"], { shards: 300 }),
    path: "telemetry.kubeStateMetrics.shards",
    expected: /at most 256/,
    found: /^300$/,
  },
  ...["../etc", "a/b", "..", ".", "job\nname", "job name"].map((job) => ({
    name: `a Run:ai job name ${JSON.stringify(job)} that is not one URL path segment`,
    edit: (d: Document) => d.setIn(["telemetry", "runai", "job"], job),
    path: "telemetry.runai.job",
    expected: /job name of letters, digits, "_", "\." and "-" \(one URL path segment\), not "\." or "\.\."/,
    found: new RegExp(`^${JSON.stringify(job).replace(/[.\\]/g, "\\$&")}$`),
  })),
  ...["/a/../metrics", "metrics", "/metrics?x=1", "/a b"].map((path) => ({
    name: `a Run:ai scrape path ${JSON.stringify(path)}`,
    edit: (d: Document) => d.setIn(["telemetry", "runai", "path"], path),
    path: "telemetry.runai.path",
    expected: /absolute URL path such as "\/metrics"/,
    found: new RegExp(`^${JSON.stringify(path).replace(/[.?/]/g, "\\$&")}$`),
  })),
];

describe("bad blueprints", () => {
  it.each(cases)("$name → $path", ({ edit, path, expected, found }) => {
    const problems = problemsAfter(edit);
    const problem = problems.find((p) => formatPath(p.path) === path);
    expect(problem, `no problem at ${path}; got ${problems.map((p) => formatPath(p.path)).join(", ")}`).toBeDefined();
    expect(problem?.expected).toMatch(expected);
    expect(problem?.found).toMatch(found);
    expect(problem?.line).toBeGreaterThan(0);
  });

  it("reports every cross-reference error of a blueprint at once", () => {
    const problems = problemsAfter((d) => {
      d.setIn(["projects", 0, "department"], "nope");
      d.setIn(["workloads", 1, "project"], "ghost");
      d.setIn(["projects", 2, "nodePools", "default", "limit"], 1);
    });
    expect(problems.map((p) => formatPath(p.path))).toEqual(
      expect.arrayContaining(["projects[0].department", "workloads[1].project", "projects[2].nodePools.default.limit"]),
    );
  });

  it("reports every schema error of a blueprint at once", () => {
    const problems = problemsAfter((d) => {
      d.setIn(["seed"], "x");
      d.setIn(["nodePools", 0, "gpuModel"], "V100");
      d.setIn(["time", "start"], "later");
    });
    expect(problems.map((p) => formatPath(p.path))).toEqual(expect.arrayContaining(["seed", "nodePools[0].gpuModel", "time.start"]));
  });

  it("reports a misspelled name beside a schema error elsewhere, in one pass, once each", () => {
    const problems = problemsAfter((d) => {
      d.setIn(["nodePools", 0, "gpuModel"], "V100");
      d.setIn(["workloads", 1, "project"], "ghost");
      d.setIn(["projects", 0, "department"], "nope");
      d.setIn(["projects", 1, "department"], 7); // a schema error: not also an unresolved name
    });
    expect(problems.map((p) => formatPath(p.path)).sort()).toEqual(
      ["nodePools[0].gpuModel", "projects[0].department", "projects[1].department", "workloads[1].project"].sort(),
    );
    expect(problems.find((p) => formatPath(p.path) === "workloads[1].project")?.expected).toMatch(
      /a project declared in projects \("vision"/,
    );
  });

  it("reports a YAML mistake once per line, not with the parser's echoes", () => {
    let problems: readonly BlueprintProblem[] = [];
    try {
      parseBlueprint("cluster:\n  name: x\n   clusterId: 7\nseed: 1\n", "indented.yaml");
    } catch (error) {
      if (error instanceof BlueprintError) problems = error.problems;
    }
    expect(problems.map((p) => [p.line, p.expected])).toEqual([[2, "well-formed YAML"]]);
  });

  it("reports an alias of an anchor no one set at its line and path, not as an excessive expansion", () => {
    let problems: readonly BlueprintProblem[] = [];
    try {
      parseBlueprint(labText.replace(/^seed: .*$/m, "seed: *lucky"), "alias.yaml");
    } catch (error) {
      if (error instanceof BlueprintError) problems = error.problems;
    }
    const line = labText.split("\n").findIndex((l) => l.startsWith("seed:")) + 1;
    expect(problems.map((p) => [formatPath(p.path), p.line, p.expected, p.found])).toEqual([
      ["seed", line, "an anchor &lucky set before the alias", "*lucky with no such anchor before it"],
    ]);
  });

  it("names one limit for a number beyond several (the seed's, not also JavaScript's safe integers)", () => {
    const problems = problemsAfter((d) => d.set("seed", 1e20));
    expect(problems.map((p) => [formatPath(p.path), p.expected])).toEqual([["seed", "a number at most 4294967295"]]);
  });

  it("warns, as Run:ai recommends and does not enforce, when a department's quota is below its projects' sum", () => {
    const doc = parseDocument(labText);
    doc.setIn(["projects", 0, "nodePools", "default", "deserved"], 20);
    const { warnings } = parseBlueprint(doc.toString(), "edited-lab.yaml");
    const warning = warnings.find((w) => formatPath(w.path) === "departments[0].nodePools.default.deserved");
    expect(warning?.severity).toBe("warning");
    expect(warning?.expected).toMatch(/sum of its projects' deserved quotas, 44/);
    expect(warning?.found).toBe("32");
  });

  it("accepts the shipped lab blueprint without problems", () => {
    expect(problemsAfter(() => {})).toEqual([]);
  });
});
