/**
 * The pinned Run:ai control-plane OpenAPI spec (2.24: runai-professional-services/runapy @v1.224.0,
 * commit 06000dd8f189375cbbeae0c92196c191af7e3a3e, .generator/swagger.json, Apache-2.0), loaded
 * into a real OpenAPI validator (openapi-backend, Ajv with the spec's formats). It is vendor data
 * and is not copied into this repository: GPUSYNTH_RUNAI_SPEC names the file, by default
 * vendor-specs/runai-openapi-2.24.json in the workspace folder beside the checkout (where CI puts
 * it). Without it the tests that validate against it are skipped, and CI fails instead.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import formats from "ajv-formats";
import { type Document, OpenAPIBackend } from "openapi-backend";
import { describe } from "vitest";

// ajv-formats is CommonJS whose module.exports is the plugin and also carries it as `default`;
// TypeScript (NodeNext) types the default import as the module, so take the plugin by name.
const addFormats = formats.default;

export const SPEC_PATH =
  process.env.GPUSYNTH_RUNAI_SPEC ?? fileURLToPath(new URL("../../../../shared/vendor-specs/runai-openapi-2.24.json", import.meta.url));
const SPEC_FOUND = existsSync(SPEC_PATH);
if (!SPEC_FOUND && process.env.CI === "true") throw new Error(`CI must provide the pinned Run:ai spec: expected ${SPEC_PATH}`);

/** A describe that runs where the spec is found and is reported as skipped elsewhere. */
export const describeWithSpec = SPEC_FOUND ? describe : describe.skip;

export interface SpecDocument {
  readonly paths: Record<string, Record<string, { operationId?: string; parameters?: unknown[] } | undefined>>;
  readonly components: { readonly schemas: Record<string, unknown> };
}

export interface RunaiSpec {
  readonly document: SpecDocument;
  /** Ajv's errors for a response body against the operation's schema for that status, or []. */
  responseErrors(operationId: string, status: number, body: unknown): string[];
  /** Whether the operation declares a response for this status. */
  declares(operationId: string, status: number): boolean;
  /** Ajv's errors for a value against one of the spec's components.schemas, or []. */
  schemaErrors(component: string, value: unknown): string[];
  /** Ajv's errors for a request (path, query) against the operation's parameters, or []. */
  requestErrors(path: string, query: URLSearchParams): string[];
  /** The operationId the spec gives a GET path, if any. */
  operationOf(path: string): string | undefined;
}

export async function loadRunaiSpec(): Promise<RunaiSpec> {
  if (!SPEC_FOUND) throw new Error(`the pinned Run:ai spec is missing: expected ${SPEC_PATH} (set GPUSYNTH_RUNAI_SPEC)`);
  const document = JSON.parse(readFileSync(SPEC_PATH, "utf8")) as SpecDocument;
  const api = new OpenAPIBackend({
    definition: withoutPrimitiveExplode(structuredClone(document)) as unknown as Document,
    quick: true,
    strict: false,
    ajvOpts: { strict: false, allErrors: true },
    customizeAjv: (ajv) => {
      addFormats(ajv);
      return ajv;
    },
  });
  await api.init();
  const components = new Ajv({ strict: false, allErrors: true });
  addFormats(components);
  components.addSchema({ $id: "runai", components: document.components }, "runai");
  const describe = (errors: ReadonlyArray<{ instancePath: string; message?: string; params?: unknown }> | null | undefined) =>
    (errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params ?? {})}`);
  return {
    document,
    responseErrors: (operationId, status, body) => {
      const op = api.getOperation(operationId);
      if (op === undefined) return [`the spec has no operation ${operationId}`];
      if (op.responses?.[String(status)] === undefined) return [`${operationId} declares no ${status} response`];
      return describe(api.validateResponse(body, op, status).errors);
    },
    declares: (operationId, status) => api.getOperation(operationId)?.responses?.[String(status)] !== undefined,
    schemaErrors: (component, value) => {
      const validate = components.compile({ $ref: `runai#/components/schemas/${component}` });
      return validate(value) ? [] : describe(validate.errors);
    },
    requestErrors: (path, query) => {
      const request = { method: "get", path, query: Object.fromEntries(groupQuery(query)), headers: {} };
      return describe(api.validateRequest(request).errors);
    },
    operationOf: (path) => api.matchOperation({ method: "get", path, headers: {} })?.operationId,
  };
}

/**
 * OpenAPI 3.0 gives `explode` meaning for arrays and objects only, but openapi-backend splits
 * any `explode: false` query value on commas, which turns the spec's single-valued groupBy of
 * cluster metrics into an array and fails it. Dropping explode where the schema is a primitive
 * keeps the spec's meaning.
 */
function withoutPrimitiveExplode(document: SpecDocument): SpecDocument {
  const lookup = (ref: string): unknown =>
    ref
      .replace(/^#\//, "")
      .split("/")
      .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], document);
  const parameters = [
    ...Object.values((document.components as { parameters?: Record<string, unknown> }).parameters ?? {}),
    ...Object.values(document.paths).flatMap((methods) => Object.values(methods).flatMap((op) => op?.parameters ?? [])),
  ] as Array<{ explode?: boolean; schema?: { type?: string; $ref?: string } }>;
  for (const parameter of parameters) {
    if (parameter.explode !== false) continue;
    const schema = (parameter.schema?.$ref === undefined ? parameter.schema : lookup(parameter.schema.$ref)) as { type?: string };
    if (schema?.type !== "array" && schema?.type !== "object") delete parameter.explode;
  }
  return document;
}

/** Repeated query parameters become arrays, as a server's query parser gives them. */
function groupQuery(query: URLSearchParams): Map<string, string | string[]> {
  const grouped = new Map<string, string | string[]>();
  for (const [key, value] of query) {
    const seen = grouped.get(key);
    grouped.set(key, seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value]);
  }
  return grouped;
}
