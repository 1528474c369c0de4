/**
 * Turns zod's validation issues into BlueprintProblems that say, in a user's words, what was
 * expected and what was found at which path.
 */
import type { z } from "zod";
import { type BlueprintProblem, describeValue } from "./problems.js";

type Issue = z.core.$ZodIssue & { input?: unknown };

function bound(issue: { inclusive?: boolean }, atLeast: boolean, limit: unknown): string {
  if (atLeast) return issue.inclusive === false ? `more than ${limit}` : `at least ${limit}`;
  return issue.inclusive === false ? `less than ${limit}` : `at most ${limit}`;
}

/** Types in the words of the YAML a user writes (a mapping, a list), with the right article. */
const TYPE_WORDS: Readonly<Record<string, string>> = {
  int: "an integer",
  object: "a mapping",
  array: "a list",
  boolean: "true or false",
  undefined: "nothing",
};

function expectation(issue: Issue): string {
  switch (issue.code) {
    case "invalid_type":
      return TYPE_WORDS[issue.expected] ?? `${/^[aeiou]/.test(issue.expected) ? "an" : "a"} ${issue.expected}`;
    case "too_small": {
      const limit = String(issue.minimum);
      if (issue.origin === "array") return `a list with ${bound(issue, true, limit)} item(s)`;
      if (issue.origin === "string") return `a text of ${bound(issue, true, limit)} character(s)`;
      return `a number ${bound(issue, true, limit)}`;
    }
    case "too_big": {
      const limit = String(issue.maximum);
      if (issue.origin === "array") return `a list with ${bound(issue, false, limit)} item(s)`;
      if (issue.origin === "string") return `a text of ${bound(issue, false, limit)} character(s)`;
      return `a number ${bound(issue, false, limit)}`;
    }
    case "invalid_value":
      return `one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}`;
    case "invalid_format":
      return issue.format === "regex" ? issue.message : `a valid ${issue.format}`;
    case "unrecognized_keys":
      return "only known keys (check the spelling; the JSON Schema in blueprints/ lists them)";
    case "custom":
      return issue.message.replace(/^expected /, "");
    default:
      return issue.message;
  }
}

/**
 * Of several bounds one value breaks in the same direction (an integer's safe range and the
 * field's own maximum, say), only the tightest: one value, one limit.
 */
function tightestBounds(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const tightest = new Map<string, z.core.$ZodIssue>();
  const keyOf = (issue: z.core.$ZodIssue) =>
    issue.code === "too_big" || issue.code === "too_small"
      ? `${issue.code} ${JSON.stringify(issue.path, (_, v) => (typeof v === "symbol" ? String(v) : v))}`
      : undefined;
  const limit = (issue: z.core.$ZodIssue) =>
    Number(issue.code === "too_big" ? issue.maximum : issue.code === "too_small" ? issue.minimum : Number.NaN);
  for (const issue of issues) {
    const key = keyOf(issue);
    if (key === undefined) continue;
    const known = tightest.get(key);
    const tighter = known === undefined || (issue.code === "too_big" ? limit(issue) < limit(known) : limit(issue) > limit(known));
    if (tighter) tightest.set(key, issue);
  }
  return issues.filter((issue) => {
    const key = keyOf(issue);
    return key === undefined || tightest.get(key) === issue;
  });
}

export function problemsFromZod(issues: readonly z.core.$ZodIssue[]): BlueprintProblem[] {
  const problems: BlueprintProblem[] = [];
  for (const raw of tightestBounds(issues)) {
    const issue = raw as Issue;
    const path = issue.path.map((part) => (typeof part === "symbol" ? String(part) : part));
    if (issue.code === "unrecognized_keys") {
      // One problem per unknown key, located at the key itself.
      for (const key of issue.keys) {
        problems.push({ severity: "error", path: [...path, key], expected: expectation(issue), found: `unknown key "${key}"` });
      }
      continue;
    }
    problems.push({ severity: "error", path, expected: expectation(issue), found: describeValue(issue.input) });
  }
  return problems;
}
