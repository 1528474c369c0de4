/**
 * Reading a blueprint from disk: file checks, YAML parsing, schema validation and
 * cross-reference validation, with every problem located in the file (line, column, path).
 * Nothing here throws anything but BlueprintError for a user's mistake.
 */
import { readFileSync, statSync } from "node:fs";
import { type Document, isCollection, isScalar, LineCounter, type Node, parseDocument } from "yaml";
import { crossReferenceProblems } from "./cross-reference.js";
import { plausibilityWarnings } from "./plausibility.js";
import { BlueprintError, type BlueprintProblem, type YamlPath } from "./problems.js";
import { type Blueprint, blueprintSchema } from "./schema.js";
import { problemsFromZod } from "./zod-problems.js";

/** Real blueprints are a few KiB; anything this large is a wrong file, not a blueprint. */
export const MAX_BLUEPRINT_BYTES = 2 * 1024 * 1024;
/** Real blueprints nest about 8 levels; deeper documents are rejected before validation. */
export const MAX_NESTING_DEPTH = 64;

export interface LoadedBlueprint {
  readonly blueprint: Blueprint;
  readonly warnings: readonly BlueprintProblem[];
}

const fileProblem = (expected: string, found: string): BlueprintProblem => ({ severity: "error", path: [], expected, found });

export function loadBlueprint(file: string): LoadedBlueprint {
  let size: number;
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) throw new BlueprintError(file, [fileProblem("a blueprint YAML file", "a directory")]);
    size = stat.size;
  } catch (cause) {
    if (cause instanceof BlueprintError) throw cause;
    const code = (cause as NodeJS.ErrnoException).code ?? "unknown error";
    throw new BlueprintError(file, [fileProblem("a readable blueprint YAML file", code === "ENOENT" ? "no such file" : code)]);
  }
  if (size > MAX_BLUEPRINT_BYTES) {
    throw new BlueprintError(file, [fileProblem(`a blueprint of at most ${MAX_BLUEPRINT_BYTES} bytes`, `${size} bytes`)]);
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new BlueprintError(file, [
      fileProblem("a readable blueprint YAML file", (cause as NodeJS.ErrnoException).code ?? "unknown error"),
    ]);
  }
  return parseBlueprint(text, file);
}

/** Parses and validates blueprint text; `file` names it in messages. */
export function parseBlueprint(text: string, file = "<blueprint>"): LoadedBlueprint {
  if (text.length > MAX_BLUEPRINT_BYTES) {
    throw new BlueprintError(file, [fileProblem(`a blueprint of at most ${MAX_BLUEPRINT_BYTES} bytes`, `${text.length} characters`)]);
  }
  if (text.trim() === "")
    throw new BlueprintError(file, [fileProblem("a YAML mapping with cluster, nodePools, departments, projects, …", "an empty file")]);
  const depth = flowNestingDepth(text);
  if (depth > MAX_NESTING_DEPTH) {
    throw new BlueprintError(file, [fileProblem(`nesting of at most ${MAX_NESTING_DEPTH} levels`, `${depth} levels of brackets`)]);
  }

  const lines = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  } catch (cause) {
    throw new BlueprintError(file, [fileProblem("well-formed YAML", (cause as Error).message)]);
  }
  if (doc.errors.length > 0) {
    throw new BlueprintError(
      file,
      doc.errors.map((e) => {
        const pos = lines.linePos(e.pos[0]);
        return {
          severity: "error",
          path: [],
          expected: "well-formed YAML",
          found: e.message.split("\n")[0] ?? e.code,
          line: pos.line,
          column: pos.col,
        };
      }),
    );
  }
  const blockDepth = nodeDepth(doc.contents);
  if (blockDepth > MAX_NESTING_DEPTH) {
    throw new BlueprintError(file, [fileProblem(`nesting of at most ${MAX_NESTING_DEPTH} levels`, `${blockDepth} levels`)]);
  }
  let data: unknown;
  try {
    // Aliases are legal YAML but a "billion laughs" document expands them exponentially.
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (cause) {
    throw new BlueprintError(file, [fileProblem("YAML without excessive alias expansion", (cause as Error).message)]);
  }
  if (data === null || data === undefined || typeof data !== "object" || Array.isArray(data)) {
    const found = data === null || data === undefined ? "an empty document" : Array.isArray(data) ? "a list" : `a ${typeof data}`;
    throw new BlueprintError(file, [fileProblem("a YAML mapping with cluster, nodePools, departments, projects, …", found)]);
  }

  const locate = (problem: BlueprintProblem): BlueprintProblem => {
    const at = nodeAt(doc, problem.path);
    if (at?.range === undefined || at.range === null) return problem;
    const pos = lines.linePos(at.range[0]);
    return { ...problem, line: pos.line, column: pos.col };
  };

  const parsed = blueprintSchema.safeParse(data, { reportInput: true });
  if (!parsed.success) throw new BlueprintError(file, problemsFromZod(parsed.error.issues).map(locate));
  const crossProblems = crossReferenceProblems(parsed.data).map(locate);
  const errors = crossProblems.filter((p) => p.severity === "error");
  if (errors.length > 0) throw new BlueprintError(file, errors);
  const warnings = [...crossProblems.filter((p) => p.severity === "warning"), ...plausibilityWarnings(parsed.data).map(locate)];
  return { blueprint: parsed.data, warnings };
}

/** The deepest node on the path that exists (a missing key is reported at its parent). */
function nodeAt(doc: Document.Parsed, path: YamlPath): Node | undefined {
  for (let length = path.length; length >= 0; length--) {
    const node = doc.getIn(path.slice(0, length), true);
    if (node !== undefined && (isScalar(node) || isCollection(node))) return node as Node;
  }
  return undefined;
}

/** Max bracket depth of flow collections, counted without parsing (so parsing cannot overflow). */
function flowNestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  return max;
}

function nodeDepth(node: unknown, level = 0): number {
  if (level > MAX_NESTING_DEPTH) return level;
  if (!isCollection(node)) return level;
  let max = level + 1;
  for (const item of node.items as unknown[]) {
    const value = item !== null && typeof item === "object" && "value" in item ? (item as { value: unknown }).value : item;
    max = Math.max(max, nodeDepth(value, level + 1));
  }
  return max;
}
