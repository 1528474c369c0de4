/**
 * What a user sees when a blueprint is wrong: where (file, line, YAML path), what was
 * expected and what was found. Every check reports into one list so a user fixes
 * everything in one pass instead of one error per run.
 */

export type YamlPath = ReadonlyArray<string | number>;

export interface BlueprintProblem {
  readonly severity: "error" | "warning";
  /** Path inside the YAML document, e.g. ["projects", 2, "nodePools", "train", "deserved"]. */
  readonly path: YamlPath;
  readonly expected: string;
  /** What the blueprint holds there, rendered for people (e.g. `"trian"`, `16`, `nothing`). */
  readonly found: string;
  /** 1-based line and column of the offending node, when the document locates it. */
  readonly line?: number;
  readonly column?: number;
}

/** Renders a path the way people write it: projects[2].nodePools.train.deserved */
export function formatPath(path: YamlPath): string {
  if (path.length === 0) return "(document root)";
  let text = "";
  for (const part of path) {
    if (typeof part === "number") text += `[${part}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(part)) text += text === "" ? part : `.${part}`;
    else text += `[${JSON.stringify(part)}]`;
  }
  return text;
}

/** Renders a found value briefly: strings quoted, long values cut, objects summarised. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing (the key is missing)";
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return `a list of ${value.length} item${value.length === 1 ? "" : "s"}`;
  if (typeof value === "object") {
    const keys = Object.keys(value as object);
    return keys.length === 0 ? "an empty mapping" : `a mapping with keys ${keys.slice(0, 6).join(", ")}${keys.length > 6 ? ", ..." : ""}`;
  }
  return String(value);
}

export function formatProblem(problem: BlueprintProblem, file?: string): string {
  const where = [file, problem.line, problem.column].filter((part) => part !== undefined).join(":");
  const prefix = where === "" ? "" : `${where}: `;
  return `${prefix}${problem.severity}: ${formatPath(problem.path)}: expected ${problem.expected}, found ${problem.found}`;
}

export class BlueprintError extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly BlueprintProblem[],
  ) {
    super(
      `${file}: invalid blueprint (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n` +
        problems.map((problem) => `  ${formatProblem(problem, file)}`).join("\n"),
    );
    this.name = "BlueprintError";
  }
}
