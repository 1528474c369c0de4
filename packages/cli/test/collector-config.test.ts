/**
 * A lint of otel-collector.yaml, without a collector (this machine has no Docker): every component
 * a pipeline names is defined and every defined one is used, every environment variable is
 * explained, and the pseudonymising statements — applied with OTTL's semantics by the small
 * interpreter below, which refuses any statement form it does not know — leave none of a
 * blueprint's sensitive names in gpusynth's own metrics and logs. The interpreter is this test's,
 * not the collector's: the real collector runs in compose/ (`just lab-check`, with Docker), and
 * vmagent-pseudonymise.test.ts proves the same story on a real component.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { scanOtlpRequest } from "../src/leakcheck/scan.js";
import { sensitiveNames } from "../src/leakcheck/sensitive.js";
import { main } from "../src/main.js";
import { captureOutput } from "./helpers.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const configText = readFileSync(repo("otel-collector.yaml"), "utf8");
const config = parse(configText) as {
  receivers: Record<string, unknown>;
  processors: Record<string, unknown>;
  exporters: Record<string, unknown>;
  service: { pipelines: Record<string, { receivers: string[]; processors: string[]; exporters: string[] }> };
};
const SALT = "test-salt";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("otel-collector.yaml wiring", () => {
  it("defines every component a pipeline uses and uses every component it defines", () => {
    const pipelines = Object.values(config.service.pipelines);
    for (const kind of ["receivers", "processors", "exporters"] as const) {
      const used = new Set(pipelines.flatMap((p) => p[kind]));
      expect([...used].sort(), kind).toEqual(Object.keys(config[kind]).sort());
    }
  });

  it("starts with memory_limiter and ends with batch in every pipeline", () => {
    for (const [name, p] of Object.entries(config.service.pipelines)) {
      expect(p.processors[0], name).toBe("memory_limiter");
      expect(p.processors.at(-1), name).toBe("batch");
    }
  });

  it("explains every environment variable it reads in its header", () => {
    const variables = new Set([...configText.matchAll(/\$\{env:([A-Z_]+)\}/g)].map((m) => m[1] as string));
    const header = configText.split("\nreceivers:")[0] ?? "";
    expect(variables.size).toBeGreaterThan(0);
    for (const v of variables) expect(header, v).toMatch(new RegExp(`#\\s+${v}\\s`));
  });

  it("keeps the vendors' metric names on the remote-write path", () => {
    expect((config.exporters.prometheusremotewrite as { add_metric_suffixes: boolean }).add_metric_suffixes).toBe(false);
  });
});

// ---- a deliberately small OTTL interpreter: the two statement forms the config uses ----

type Attributes = Array<{ key: string; value: { stringValue?: string } }>;
interface Scope {
  attributes: Attributes;
  resource?: Attributes;
  body?: { stringValue?: string };
}

const unquote = (s: string) => s.replace(/\\(.)/g, "$1");
/** The collector's config expansion: the salt variable, and $$ as a literal $. */
const SALT_VARIABLE = ["$", "{env:GPUSYNTH_PSEUDONYM_SALT}"].join("");
const withEnv = (s: string) => s.replaceAll(SALT_VARIABLE, SALT).replaceAll("$$", "$");
const get = (attrs: Attributes | undefined, key: string) => attrs?.find((a) => a.key === key)?.value.stringValue;
const put = (attrs: Attributes, key: string, value: string) => {
  const entry = attrs.find((a) => a.key === key);
  if (entry !== undefined) entry.value = { stringValue: value };
};

/** A Go (RE2) pattern as a JavaScript global RegExp: inline (?m) becomes the m flag. */
function goRegExp(pattern: string): RegExp {
  return pattern.startsWith("(?m)") ? new RegExp(pattern.slice(4), "gm") : new RegExp(pattern, "g");
}

function condition(text: string): (scope: Scope) => boolean {
  const parts = text.split(" and ").map((c) => {
    let m = /^(resource\.)?attributes\["([^"]+)"\] != nil$/.exec(c);
    if (m !== null) return (s: Scope) => get(m?.[1] ? s.resource : s.attributes, m?.[2] as string) !== undefined;
    m = /^(resource\.)?attributes\["([^"]+)"\] != "([^"]*)"$/.exec(c);
    if (m !== null) return (s: Scope) => get(m?.[1] ? s.resource : s.attributes, m?.[2] as string) !== m?.[3];
    m = /^IsMatch\(attributes\["([^"]+)"\], "((?:[^"\\]|\\.)*)"\)$/.exec(c);
    if (m !== null) {
      // Compiled once per statement, as the collector does when it loads the configuration.
      const pattern = new RegExp(unquote(m[2] as string));
      const key = m[1] as string;
      return (s: Scope) => pattern.test(get(s.attributes, key) ?? "");
    }
    throw new Error(`unknown condition: ${c}`);
  });
  return (scope) => parts.every((p) => p(scope));
}

function statement(text: string): (scope: Scope) => void {
  const set =
    /^set\(attributes\["([^"]+)"\], SHA256\(Concat\(\["\$\{env:GPUSYNTH_PSEUDONYM_SALT\}", attributes\["([^"]+)"\]\], ""\)\)\)(?: where (.*))?$/.exec(
      text,
    );
  if (set !== null && set[1] === set[2]) {
    const when = set[3] === undefined ? () => true : condition(set[3]);
    const key = set[1] as string;
    return (s) => {
      const value = get(s.attributes, key);
      if (value !== undefined && when(s)) put(s.attributes, key, sha256(SALT + value));
    };
  }
  const replace =
    /^replace_pattern\((body|attributes\["([^"]+)"\]), "((?:[^"\\]|\\.)*)", "((?:[^"\\]|\\.)*)", SHA256(?:, "((?:[^"\\]|\\.)*)")?\)$/.exec(
      text,
    );
  if (replace !== null) {
    const pattern = goRegExp(unquote(replace[3] as string));
    const replacement = withEnv(unquote(replace[4] as string));
    const format = replace[5] === undefined ? "%s" : unquote(replace[5]);
    const apply = (value: string) =>
      value.replace(pattern, (...groups) =>
        format.replace("%s", sha256(replacement.replace(/\$(\d)/g, (_, i) => groups[Number(i)] as string))),
      );
    return (s) => {
      if (replace[1] === "body") {
        if (s.body?.stringValue !== undefined) s.body.stringValue = apply(s.body.stringValue);
      } else {
        const value = get(s.attributes, replace[2] as string);
        if (value !== undefined) put(s.attributes, replace[2] as string, apply(value));
      }
    };
  }
  throw new Error(`the test's OTTL interpreter does not know: ${text}`);
}

const transform = config.processors["transform/pseudonymise"] as {
  metric_statements: Array<{ context: string; statements: string[] }>;
  log_statements: Array<{ context: string; statements: string[] }>;
};
const group = (groups: Array<{ context: string; statements: string[] }>, context: string) =>
  (groups.find((g) => g.context === context)?.statements ?? []).map(statement);

interface OtlpLine {
  resourceMetrics?: Array<{ scopeMetrics: Array<{ metrics: Array<Record<string, { dataPoints?: Array<{ attributes: Attributes }> }>> }> }>;
  resourceLogs?: Array<{
    resource: { attributes: Attributes };
    scopeLogs: Array<{ logRecords: Array<{ attributes: Attributes; body?: { stringValue?: string } }> }>;
  }>;
}

const datapoint = group(transform.metric_statements, "datapoint");
const resource = group(transform.log_statements, "resource");
const log = group(transform.log_statements, "log");

function pseudonymise(line: OtlpLine): { points: number; records: number } {
  let points = 0;
  let records = 0;
  for (const rm of line.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics)
      for (const metric of sm.metrics)
        for (const data of [metric.gauge, metric.sum])
          for (const point of data?.dataPoints ?? []) {
            points++;
            for (const run of datapoint) run({ attributes: point.attributes });
          }
  for (const rl of line.resourceLogs ?? []) {
    for (const run of resource) run({ attributes: rl.resource.attributes });
    for (const sl of rl.scopeLogs)
      for (const record of sl.logRecords) {
        records++;
        for (const run of log)
          run({
            attributes: record.attributes,
            resource: rl.resource.attributes,
            ...(record.body === undefined ? {} : { body: record.body }),
          });
      }
  }
  return { points, records };
}

describe("otel-collector.yaml pseudonymisation on gpusynth's output", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-collector-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    // Long enough for each scenario's story (evictions, backlog, XIDs, restarts, the eviction).
    ["blueprints/scenarios/preemption-storm.yaml", "65m"],
    ["blueprints/scenarios/quota-exhaustion.yaml", "45m"],
    ["blueprints/scenarios/gpu-fault.yaml", "70m"],
    ["blueprints/scenarios/crash-loop.yaml", "40m"],
    ["blueprints/scenarios/memory-pressure.yaml", "25m"],
    ["blueprints/lab.yaml", "1h"],
  ])(
    "leaves no sensitive name of %s in clear",
    async (blueprint, duration) => {
      const base = join(dir, blueprint.replace(/\W+/g, "-"));
      const { output } = captureOutput();
      expect(
        await main(
          [
            "run",
            "--offline",
            "--duration",
            duration,
            "--interval",
            "5m",
            "--otlp-json",
            `${base}.m`,
            "--otlp-json-logs",
            `${base}.l`,
            repo(blueprint),
          ],
          output,
        ),
      ).toBe(0);
      // The statements applied to each request as the collector would, and the result scanned as
      // `gpusynth leakcheck --otlp-json` scans a file (its own test covers the command).
      const names = sensitiveNames(loadBlueprint(repo(blueprint)).blueprint);
      let before = { points: 0, records: 0 };
      const leaks: string[] = [];
      for (const file of [`${base}.m`, `${base}.l`]) {
        readFileSync(file, "utf8")
          .split("\n")
          .forEach((line, index) => {
            if (line === "") return;
            const parsed = JSON.parse(line) as OtlpLine;
            const counted = pseudonymise(parsed);
            before = { points: before.points + counted.points, records: before.records + counted.records };
            for (const leak of scanOtlpRequest(parsed, `${file}:${index + 1}`, names)) leaks.push(`${leak.where}: ${leak.name.value}`);
          });
      }
      expect(before.points).toBeGreaterThan(0);
      expect(before.records).toBeGreaterThan(0);
      expect(names.length).toBeGreaterThan(0);
      expect(leaks.slice(0, 20)).toEqual([]);
    },
    120_000,
  );

  it("gives a name the same pseudonym in labels and in event bodies", () => {
    const namespace = sha256(`${SALT}runai-vision`);
    const scope: Scope = {
      attributes: [{ key: "k8s.namespace.name", value: { stringValue: "runai-vision" } }],
      resource: [{ key: "k8s.object.kind", value: { stringValue: "Pod" } }],
      body: { stringValue: "Created container train-ok" },
    };
    for (const run of group(transform.log_statements, "log")) run(scope);
    expect(get(scope.attributes, "k8s.namespace.name")).toBe(namespace);
    expect(scope.body?.stringValue).toBe(`Created container ${sha256(`${SALT}train-ok`)}`);
    const point = { attributes: [{ key: "namespace", value: { stringValue: "runai-vision" } }] as Attributes };
    for (const run of group(transform.metric_statements, "datapoint")) run(point);
    expect(get(point.attributes, "namespace")).toBe(namespace);
  });
});
