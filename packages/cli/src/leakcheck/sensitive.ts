/**
 * The names a blueprint declares that identify people and teams — projects, departments,
 * users and workloads — and that a pseudonymising pipeline must hide wherever they appear:
 * alone, or inside names derived from them (namespace runai-<project>, pod <workload>-0-0,
 * queue <project>-<pool>, pod group pg-<workload>-<uid>).
 */
import type { Blueprint } from "@gpusynth/blueprint";

export interface SensitiveName {
  readonly value: string;
  readonly kind: "project" | "department" | "user" | "workload";
}

export function sensitiveNames(blueprint: Blueprint): SensitiveName[] {
  const names = new Map<string, SensitiveName["kind"]>();
  const add = (value: string, kind: SensitiveName["kind"]) => {
    if (!names.has(value)) names.set(value, kind);
  };
  for (const p of blueprint.projects) {
    add(p.name, "project");
    for (const u of p.users) add(u, "user");
  }
  // "default" is Run:ai's built-in department (runai CLI docs), the vendor's word rather than a
  // team's name — and node pools are often called that too.
  for (const d of blueprint.departments) if (d.name !== "default") add(d.name, "department");
  // Generated workloads are named <generator>-<n>: the generator name is what identifies them.
  for (const g of blueprint.workloads) add(g.name, "workload");
  for (const s of blueprint.submissions) {
    add(s.name, "workload");
    if (s.user !== undefined) add(s.user, "user");
  }
  // Longest first, so a finding names the most specific value it contains.
  return [...names]
    .map(([value, kind]) => ({ value, kind }))
    .sort((a, b) => b.value.length - a.value.length || a.value.localeCompare(b.value));
}

const patterns = new WeakMap<SensitiveName, RegExp>();
/** Per list of names, one pattern that finds any of them: most values hold none, and one search rules them all out. */
const anyOfPatterns = new WeakMap<readonly SensitiveName[], RegExp>();

/** A name as a whole token: not glued to other letters or digits. */
function tokenPattern(alternatives: readonly string[]): RegExp {
  const escaped = alternatives.map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`(?<![A-Za-z0-9])(?:${escaped.join("|")})(?![A-Za-z0-9])`);
}

/**
 * The sensitive names a text contains — inside other names too ("runai-vision", "train-ok-0-0"),
 * but only as a whole token, not glued to other letters or digits, so a user named "ati" is not found
 * in "Consolidation". Case-sensitive, as Kubernetes names are.
 */
export function namesIn(text: string, names: readonly SensitiveName[]): SensitiveName[] {
  // A search for all the names at once (a blueprint has hundreds) is fifty times cheaper than one
  // per name: a value that holds none, the usual case, costs only that.
  let anyOf = anyOfPatterns.get(names);
  if (anyOf === undefined) {
    anyOf = tokenPattern(names.map((n) => n.value));
    anyOfPatterns.set(names, anyOf);
  }
  if (!anyOf.test(text)) return [];
  return names.filter((n) => {
    let pattern = patterns.get(n);
    if (pattern === undefined) {
      pattern = tokenPattern([n.value]);
      patterns.set(n, pattern);
    }
    return text.includes(n.value) && pattern.test(text);
  });
}

/** Per list of names, the pattern mayHoldNames searches raw JSON for, or null where a name may be written otherwise. */
const rawPatterns = new WeakMap<readonly SensitiveName[], RegExp | null>();
/**
 * Characters JSON has no short escape for (as it has `\/`, `\"` and `\\`): a name of these alone
 * is in a JSON text's characters wherever it is in one of its strings, unless a `\u` escape wrote
 * one of them (ESCAPED_PLAIN).
 */
const PLAIN = /^[A-Za-z0-9 _.@:+=-]+$/;
/**
 * A `\u` escape of a PLAIN character (or of a few neighbours): legal, though no common JSON writer
 * makes one. Go's encoding/json escapes `<`, `>` and `&` (in KAI's log lines: "queue <name>"),
 * which are not among them.
 */
const ESCAPED_PLAIN = /\\u00(?:2[0BbDdEe]|3[0-9AaDd]|[4-7][0-9A-Fa-f])/;

/**
 * Whether the raw JSON text of a request or record may hold a sensitive name in one of its strings:
 * false only where none of the names is in its characters, written as itself or escaped, so a
 * file or backend that holds none (what a pseudonymising pipeline leaves) is ruled out line by
 * line without parsing. Always true where a name holds a character JSON may escape otherwise.
 */
export function mayHoldNames(json: string, names: readonly SensitiveName[]): boolean {
  let raw = rawPatterns.get(names);
  if (raw === undefined) {
    raw = names.every((n) => PLAIN.test(n.value)) ? new RegExp(names.map((n) => n.value.replace(/[.+]/g, "\\$&")).join("|")) : null;
    rawPatterns.set(names, raw);
  }
  return raw === null || raw.test(json) || ESCAPED_PLAIN.test(json);
}
