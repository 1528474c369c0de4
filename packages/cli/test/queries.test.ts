/**
 * docs/queries.md: every PromQL block parses (Prometheus' own lezer grammar) and uses only
 * metric names that gpusynth emits: the families signals/ documents as emitted, each of which
 * `gpusynth check-signals` (in `just check`) finds in runs of the shipped blueprints. An opt-in
 * or PENDING family is not in a default run, so a query on one fails here.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SIGNALS_DIR } from "../src/repo-paths.js";
import { readSignals } from "../src/signals-doc.js";

const require = createRequire(import.meta.url);
const { parser } = require("@prometheus-io/lezer-promql") as {
  parser: { parse(text: string): { cursor(): { name: string; from: number; to: number; next(): boolean } } };
};
const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

const queries = [...readFileSync(root("docs/queries.md"), "utf8").matchAll(/```promql\n([\s\S]*?)```/g)].map((m) =>
  (m[1] as string).trim(),
);

/** Metric names of every vector selector, and whether the parser found an error. */
function inspect(query: string): { names: string[]; errors: number } {
  const names: string[] = [];
  let errors = 0;
  const cursor = parser.parse(query).cursor();
  let inSelector = false;
  do {
    if (cursor.name === "⚠") errors++;
    if (cursor.name === "VectorSelector") inSelector = true;
    else if (cursor.name === "Identifier" && inSelector) {
      names.push(query.slice(cursor.from, cursor.to));
      inSelector = false;
    } else if (cursor.name !== "Identifier") inSelector = inSelector && cursor.name !== "LabelMatchers";
  } while (cursor.next());
  return { names, errors };
}

const emitted = new Set(
  readSignals(SIGNALS_DIR)
    .filter((family) => family.status === "emitted" && !family.type.startsWith("log-"))
    .map((family) => family.name),
);

describe("docs/queries.md", () => {
  it("holds the journeys' queries", () => {
    expect(queries.length).toBeGreaterThanOrEqual(15);
  });

  it.each(queries.map((q, i) => [i + 1, q]))("query %i parses and uses only emitted metrics", (_i, query) => {
    const { names, errors } = inspect(query as string);
    expect(errors).toBe(0);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(emitted, `${name} is not emitted`).toContain(name);
  });

  it("catches a query that does not parse or names a metric gpusynth does not emit", () => {
    expect(inspect("sum by (action) (increase(kai_pod_group_evicted_pods_total[10m])").errors).toBeGreaterThan(0);
    expect(inspect("rate(runai_pod_phase_with_info[5m])").names.every((n) => emitted.has(n))).toBe(false);
  });
});
