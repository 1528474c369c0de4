/**
 * Reading a blueprint from disk: file checks, YAML parsing, schema validation and
 * cross-reference validation, with every problem located in the file (line, column, path).
 * Nothing here throws anything but BlueprintError for a user's mistake.
 */
import { readFileSync, type Stats, statSync } from "node:fs";
import { type Document, isCollection, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument, visit } from "yaml";
import { crossReferenceProblems } from "./cross-reference.js";
import { unresolvedNames } from "./name-references.js";
import { plausibilityWarnings } from "./plausibility.js";
import { BlueprintError, type BlueprintProblem, formatPath, type YamlPath } from "./problems.js";
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

/** What stat says a path is, in a user's words, for what is not a regular file. */
function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a named pipe (FIFO)";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}

export function loadBlueprint(file: string): LoadedBlueprint {
  let size: number;
  try {
    const stat = statSync(file);
    // A pipe or a device has no size and may never end (/dev/zero), and opening a FIFO waits for
    // a writer: only a regular file is read, so validate answers at once whatever it is given.
    if (!stat.isFile()) throw new BlueprintError(file, [fileProblem("a blueprint YAML file (a regular file)", kindOf(stat))]);
    size = stat.size;
  } catch (cause) {
    if (cause instanceof BlueprintError) throw cause;
    const code = (cause as NodeJS.ErrnoException).code ?? "unknown error";
    throw new BlueprintError(file, [fileProblem("a readable blueprint YAML file", code === "ENOENT" ? "no such file" : code)]);
  }
  if (size > MAX_BLUEPRINT_BYTES) {
    throw new BlueprintError(file, [fileProblem(`a blueprint of at most ${MAX_BLUEPRINT_BYTES} bytes`, `${size} bytes`)]);
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (cause) {
    throw new BlueprintError(file, [
      fileProblem("a readable blueprint YAML file", (cause as NodeJS.ErrnoException).code ?? "unknown error"),
    ]);
  }
  // It may have grown since it was measured.
  if (bytes.length > MAX_BLUEPRINT_BYTES) {
    throw new BlueprintError(file, [fileProblem(`a blueprint of at most ${MAX_BLUEPRINT_BYTES} bytes`, `${bytes.length} bytes`)]);
  }
  return parseBlueprint(bytes.toString("utf8"), file);
}

/**
 * Blueprints parsed in this process, by their text: the suite, check-signals and the report load
 * the same files again and again, and parsing platform.yaml's 280 KB takes 0.3 s where a copy of
 * its result takes 8 ms. Each load gets a copy of its own, so no caller sees another's changes.
 */
const parsedTexts = new Map<string, LoadedBlueprint>();
/** Enough for every shipped blueprint and scenario; the oldest is let go beyond it. */
const PARSED_TEXTS_KEPT = 16;

/** Parses and validates blueprint text; `file` names it in messages. */
export function parseBlueprint(text: string, file = "<blueprint>"): LoadedBlueprint {
  const parsed = parsedTexts.get(text);
  if (parsed !== undefined) return structuredClone(parsed);
  const loaded = parseBlueprintText(text, file);
  parsedTexts.set(text, structuredClone(loaded));
  if (parsedTexts.size > PARSED_TEXTS_KEPT) parsedTexts.delete(parsedTexts.keys().next().value as string);
  return loaded;
}

function parseBlueprintText(text: string, file: string): LoadedBlueprint {
  if (text.length > MAX_BLUEPRINT_BYTES) {
    throw new BlueprintError(file, [fileProblem(`a blueprint of at most ${MAX_BLUEPRINT_BYTES} bytes`, `${text.length} characters`)]);
  }
  if (text.trim() === "")
    throw new BlueprintError(file, [fileProblem("a YAML mapping with cluster, nodePools, departments, projects, …", "an empty file")]);
  // The parser recurses once per level of nesting and overflows the stack near a thousand
  // levels, so both styles of nesting are measured before it runs.
  const flow = flowNesting(text, MAX_NESTING_DEPTH);
  if (flow !== undefined) {
    throw new BlueprintError(file, [
      { ...fileProblem(`nesting of at most ${MAX_NESTING_DEPTH} levels`, `${flow.depth} levels of brackets`), line: flow.line },
    ]);
  }
  const deepLine = blockNestingLine(text, MAX_NESTING_DEPTH);
  if (deepLine !== undefined) {
    throw new BlueprintError(file, [
      {
        ...fileProblem(`nesting of at most ${MAX_NESTING_DEPTH} levels`, `more than ${MAX_NESTING_DEPTH} levels of indentation`),
        line: deepLine,
      },
    ]);
  }

  const lines = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  } catch (cause) {
    throw new BlueprintError(file, [fileProblem("well-formed YAML", (cause as Error).message)]);
  }
  if (doc.errors.length > 0) {
    // The parser reports one mistake several times (a bad indentation is also a multi-line
    // implicit key…): the first error of each line says it, the rest are its echoes.
    const byLine = new Map<number, BlueprintProblem>();
    for (const e of doc.errors) {
      const pos = lines.linePos(e.pos[0]);
      if (byLine.has(pos.line)) continue;
      byLine.set(pos.line, {
        severity: "error",
        path: [],
        expected: "well-formed YAML",
        found: e.message.split("\n")[0] ?? e.code,
        line: pos.line,
        column: pos.col,
      });
    }
    throw new BlueprintError(file, [...byLine.values()]);
  }
  const blockDepth = nodeDepth(doc.contents);
  if (blockDepth > MAX_NESTING_DEPTH) {
    throw new BlueprintError(file, [fileProblem(`nesting of at most ${MAX_NESTING_DEPTH} levels`, `${blockDepth} levels`)]);
  }
  // An alias names an anchor set before it (YAML 1.2 §7.1); one that names none is the user's
  // mistake at that line, not an expansion the limit below refuses.
  const unresolved: BlueprintProblem[] = [];
  visit(doc, {
    Alias(_, alias, ancestors) {
      if (alias.resolve(doc) !== undefined) return;
      const pos = lines.linePos(alias.range?.[0] ?? 0);
      // The YAML path from the ancestors: a mapping's key, a sequence's index.
      const path = ancestors.flatMap((node, i): Array<string | number> => {
        const child = ancestors[i + 1] ?? alias;
        if (isPair(node)) return node.value === child && isScalar(node.key) ? [String(node.key.value)] : [];
        return isSeq(node) ? [node.items.indexOf(child as never)] : [];
      });
      unresolved.push({
        severity: "error",
        path,
        expected: `an anchor &${alias.source} set before the alias`,
        found: `*${alias.source} with no such anchor before it`,
        line: pos.line,
        column: pos.col,
      });
    },
  });
  if (unresolved.length > 0) throw new BlueprintError(file, unresolved);
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
  if (!parsed.success) {
    // Names that refer to others are checked on the raw document too, so one pass reports a
    // misspelled project beside a schema problem elsewhere; a field the schema already faults is
    // not reported twice.
    const schemaProblems = problemsFromZod(parsed.error.issues);
    const faulted = new Set(schemaProblems.map((p) => formatPath(p.path)));
    const names = unresolvedNames(data).filter((p) => !faulted.has(formatPath(p.path)));
    throw new BlueprintError(file, [...schemaProblems, ...names].map(locate));
  }
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

/**
 * Max bracket depth of flow collections, counted without parsing, when it exceeds `limit`; with
 * the line where it first did.
 */
function flowNesting(text: string, limit: number): { depth: number; line: number } | undefined {
  let depth = 0;
  let max = 0;
  let line = 1;
  let firstDeepLine: number | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) line++;
    else if (c === 0x5b || c === 0x7b) {
      max = Math.max(max, ++depth);
      if (depth > limit && firstDeepLine === undefined) firstDeepLine = line;
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  return firstDeepLine === undefined ? undefined : { depth: max, line: firstDeepLine };
}

const SPACE = 0x20;
const TAB = 0x09;
/** "-", "?" and ":" followed by a space (or the line's end) open a node on the same line. */
const INDICATORS = new Set([0x2d, 0x3f, 0x3a]);
/** A line ending in a block scalar header ("key: |", "- >-", "text: |2 # comment"). */
const BLOCK_SCALAR_HEADER = /(?:^|[\s:-])[|>][0-9+-]*\s*(?:#.*)?$/;

/**
 * The first line at which block collections nest deeper than `limit`, estimated from
 * indentation without parsing. Each line opens a level at every column deeper than the levels
 * still open: its indentation, every "- " of a compact sequence ("- - x"), and the content after
 * them. The estimate counts at most one level more than the document has (a scalar leaf is
 * counted; a sequence at its parent key's column is not), so a line it finds more than limit + 1
 * deep is more than `limit` deep; the exact count after parsing catches the rest.
 */
function blockNestingLine(text: string, limit: number): number | undefined {
  const open: number[] = []; // columns of the open levels, increasing
  let blockScalarColumn: number | undefined; // a block scalar's lines are indented beyond it
  let lineNumber = 0;
  for (const line of text.split(/\r\n|\r|\n/)) {
    lineNumber++;
    let column = 0;
    while (line.charCodeAt(column) === SPACE) column++;
    const blank = column === line.length || line.charCodeAt(column) === 0x23;
    if (blockScalarColumn !== undefined) {
      if (blank || column > blockScalarColumn) continue;
      blockScalarColumn = undefined;
    }
    if (blank) continue;
    if (column === 0 && (line.startsWith("---") || line.startsWith("..."))) {
      open.length = 0;
      continue;
    }
    while (open.length > 0 && (open[open.length - 1] as number) >= column) open.pop();
    let at = column;
    for (;;) {
      open.push(at);
      if (open.length > limit + 1) return lineNumber;
      const c = line.charCodeAt(at);
      const next = line.charCodeAt(at + 1);
      if (!INDICATORS.has(c) || !(at + 1 === line.length || next === SPACE || next === TAB)) break;
      at++;
      while (line.charCodeAt(at) === SPACE || line.charCodeAt(at) === TAB) at++;
      if (at === line.length || line.charCodeAt(at) === 0x23) break;
    }
    if (BLOCK_SCALAR_HEADER.test(line)) blockScalarColumn = at;
  }
  return undefined;
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
