/**
 * Query and path parameters of the control-plane API, read the way the 2.24 spec declares
 * them: required ones present, enums within their values, integers within their bounds,
 * date-times and UUIDs well formed. A violation is an ApiError carrying the spec's error body
 * (schema Error: code, message) with a message that names the parameter, what was expected
 * and what was found.
 */

export class ApiError extends Error {
  constructor(
    readonly code: 400 | 401 | 404 | 405,
    message: string,
  ) {
    super(message);
  }
}

/** RFC 3339 date-time, as OpenAPI's `format: date-time` requires. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class Params {
  constructor(private readonly query: URLSearchParams) {}

  /**
   * An array parameter. The spec declares every array query parameter `explode: false`
   * (metricType=A,B); repeated parameters (metricType=A&metricType=B), which many HTTP clients
   * send, are accepted too.
   */
  all(name: string): string[] {
    return this.query.getAll(name).flatMap((v) => v.split(","));
  }

  one(name: string): string | undefined {
    const values = this.query.getAll(name);
    if (values.length > 1) throw new ApiError(400, `${name}: expected one value, found ${values.length}`);
    return values[0];
  }

  required(name: string): string {
    const value = this.one(name);
    if (value === undefined || value === "") throw new ApiError(400, `${name}: required parameter is missing`);
    return value;
  }

  dateTime(name: string): number {
    const text = this.required(name);
    const ms = DATE_TIME.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(ms))
      throw new ApiError(400, `${name}: expected an ISO 8601 date-time such as 2023-06-06T12:09:18.211Z, found "${text}"`);
    return ms;
  }

  integer(name: string, bounds: { min: number; max?: number; default: number }): number {
    const text = this.one(name);
    if (text === undefined) return bounds.default;
    const n = Number(text);
    const range = bounds.max === undefined ? `≥ ${bounds.min}` : `from ${bounds.min} to ${bounds.max}`;
    if (!/^-?\d+$/.test(text) || n < bounds.min || (bounds.max !== undefined && n > bounds.max))
      throw new ApiError(400, `${name}: expected an integer ${range}, found "${text}"`);
    return n;
  }

  /** A required array of enum values (at least one). */
  enums<T extends string>(name: string, allowed: readonly T[], options: { required: boolean; max?: number }): T[] {
    const values = this.all(name);
    if (options.required && values.length === 0) throw new ApiError(400, `${name}: required parameter is missing`);
    if (options.max !== undefined && values.length > options.max)
      throw new ApiError(400, `${name}: expected at most ${options.max} values, found ${values.length}`);
    for (const v of values)
      if (!(allowed as readonly string[]).includes(v))
        throw new ApiError(400, `${name}: expected one of ${allowed.join(", ")}, found "${v}"`);
    return values as T[];
  }

  enum<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const value = this.one(name);
    if (value !== undefined && !(allowed as readonly string[]).includes(value))
      throw new ApiError(400, `${name}: expected one of ${allowed.join(", ")}, found "${value}"`);
    return value as T | undefined;
  }

  boolean(name: string): boolean | undefined {
    const value = this.one(name);
    if (value === undefined) return undefined;
    if (value !== "true" && value !== "false") throw new ApiError(400, `${name}: expected true or false, found "${value}"`);
    return value === "true";
  }
}

/** A path parameter the spec declares `format: uuid`: malformed is a bad request, unknown is not found. */
export function uuidParam(name: string, value: string): string {
  if (!UUID.test(value)) throw new ApiError(400, `${name}: expected a UUID, found "${value}"`);
  return value.toLowerCase();
}
