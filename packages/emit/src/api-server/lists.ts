/**
 * The list endpoints' common query parameters (spec parameters …FilterBy, …SortBy, SortOrder,
 * Offset, Limit, Search): `filterBy` entries `<field><op><value>` with the spec's eight
 * operators, sorting by one field, paging with `next` pointing at the following page.
 */
import { runaiApi } from "@gpusynth/constructs";
import { ApiError, type Params } from "./params.js";

type Item = Record<string, unknown>;

export interface ListSpec {
  /** Fields the spec allows in filterBy and sortBy for this list. */
  readonly fields: readonly string[];
  /** How to read a field that is not a top-level property of the item. */
  readonly read?: Readonly<Record<string, (item: Item) => unknown>>;
  /** Field `search` looks in (free text, case-insensitive). */
  readonly searchIn?: string;
  /** Whether the endpoint pages (offset, limit, next). */
  readonly paged: boolean;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T/;
const OPERATORS = ["==", "!=", "<=", ">=", "=@", "!@", "=^", "=$"] as const;
type Operator = (typeof OPERATORS)[number];

export function list(items: Item[], spec: ListSpec, params: Params): { items: Item[]; next?: number } {
  const value = (item: Item, field: string) => (spec.read?.[field] ?? ((i: Item) => i[field]))(item);
  let out = items;
  for (const entry of params.all("filterBy")) {
    const { field, op, operand } = parseFilter(entry, spec.fields);
    out = out.filter((item) => matches(value(item, field), op, operand));
  }
  const search = params.one("search");
  if (search !== undefined && search !== "" && spec.searchIn !== undefined) {
    const needle = search.toLowerCase();
    out = out.filter((item) =>
      String(value(item, spec.searchIn as string) ?? "")
        .toLowerCase()
        .includes(needle),
    );
  }
  const sortBy = params.enum("sortBy", spec.fields);
  const order = params.enum("sortOrder", ["asc", "desc"] as const) ?? "asc";
  if (sortBy !== undefined) {
    out = [...out].sort((a, b) => compare(value(a, sortBy), value(b, sortBy)) * (order === "asc" ? 1 : -1));
  }
  if (!spec.paged) return { items: out };
  const offset = params.integer("offset", { min: 0, default: 0 });
  const limit = params.integer("limit", runaiApi.PAGE_LIMIT);
  const page = out.slice(offset, offset + limit);
  return offset + limit < out.length ? { items: page, next: offset + limit } : { items: page };
}

function parseFilter(entry: string, fields: readonly string[]): { field: string; op: Operator; operand: string } {
  for (const field of [...fields].sort((a, b) => b.length - a.length)) {
    if (!entry.startsWith(field)) continue;
    const op = OPERATORS.find((o) => entry.startsWith(o, field.length));
    const operand = op === undefined ? "" : entry.slice(field.length + op.length);
    if (op !== undefined && operand !== "") return { field, op, operand };
  }
  throw new ApiError(
    400,
    `filterBy: expected <field><operator><value> with a field of ${fields.join(", ")} and an operator of ${OPERATORS.join(" ")}, found "${entry}"`,
  );
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a ?? "").localeCompare(String(b ?? ""));
}

function matches(actual: unknown, op: Operator, operand: string): boolean {
  const text = actual === null || actual === undefined ? "" : String(actual);
  const numeric = typeof actual === "number" && operand.trim() !== "" && !Number.isNaN(Number(operand));
  // Dates are ISO 8601 (the spec's filterBy text): compared as instants.
  const dates = ISO_DATE.test(text) && ISO_DATE.test(operand);
  const order = numeric
    ? (actual as number) - Number(operand)
    : dates
      ? Date.parse(text) - Date.parse(operand)
      : text < operand
        ? -1
        : text > operand
          ? 1
          : 0;
  switch (op) {
    case "==":
      return numeric ? order === 0 : text === operand;
    case "!=":
      return numeric ? order !== 0 : text !== operand;
    case "<=":
      return order <= 0;
    case ">=":
      return order >= 0;
    case "=@":
      return text.includes(operand);
    case "!@":
      return !text.includes(operand);
    case "=^":
      return text.startsWith(operand);
    case "=$":
      return text.endsWith(operand);
  }
}
