/**
 * Names that refer to others — a project's department, a workload's project, the node pools
 * a quota is for — checked on the raw document, so `validate` reports them in the same pass as
 * schema problems elsewhere (a bad gpuModel does not hide a misspelled project). Once the schema
 * passes, crossReferenceProblems checks these and the rest on the typed blueprint.
 */
import type { BlueprintProblem, YamlPath } from "./problems.js";

/** "a <what> declared in <section> ("a", "b")": the expectation every unresolved name states. */
export function declaredIn(what: string, section: string, names: readonly string[]): string {
  return `a ${what} declared in ${section} (${names.map((n) => `"${n}"`).join(", ") || "none declared"})`;
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
const names = (section: unknown): string[] =>
  list(section).flatMap((item) => {
    const name = field(item, "name");
    return typeof name === "string" ? [name] : [];
  });

export function unresolvedNames(data: unknown): BlueprintProblem[] {
  const problems: BlueprintProblem[] = [];
  const pools = names(field(data, "nodePools"));
  const departments = names(field(data, "departments"));
  const projects = names(field(data, "projects"));
  const check = (path: YamlPath, value: unknown, declared: readonly string[], what: string, section: string) => {
    if (typeof value === "string" && declared.length > 0 && !declared.includes(value))
      problems.push({ severity: "error", path, expected: declaredIn(what, section, declared), found: `"${value}"` });
  };
  const poolKeys = (path: YamlPath, quotas: unknown) => {
    if (typeof quotas !== "object" || quotas === null || Array.isArray(quotas)) return;
    for (const key of Object.keys(quotas)) check([...path, key], key, pools, "node pool", "nodePools");
  };
  list(field(data, "departments")).forEach((d, i) => {
    poolKeys(["departments", i, "nodePools"], field(d, "nodePools"));
  });
  list(field(data, "projects")).forEach((p, i) => {
    check(["projects", i, "department"], field(p, "department"), departments, "department", "departments");
    poolKeys(["projects", i, "nodePools"], field(p, "nodePools"));
  });
  for (const section of ["workloads", "submissions"])
    list(field(data, section)).forEach((w, i) => {
      check([section, i, "project"], field(w, "project"), projects, "project", "projects");
    });
  return problems;
}
