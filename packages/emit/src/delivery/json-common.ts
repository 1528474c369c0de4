/**
 * What the OTLP JSON encodings of metrics and logs share, written as the SDK's serializers write
 * it (@opentelemetry/otlp-transformer: JSON.stringify of the request objects its
 * common/internal.ts and the JSON encoder of common/utils.ts build): an AnyValue, a list of
 * KeyValues, a timestamp, a number.
 */

import type { Resource } from "@opentelemetry/resources";
import type { Scope } from "./otlp-common.js";

/** A number as JSON.stringify writes it (NaN and infinities as null), without its general path. */
export const numberJson = (value: number): string => (Number.isFinite(value) ? String(value) : "null");

/**
 * An HrTime as the SDK's JSON encoder writes it (encodeAsString): its nanoseconds since the epoch,
 * in decimal; through BigInt, as the SDK goes, where seconds and nanoseconds are not plain.
 */
export function hrTimeJson(time: readonly [number, number]): string {
  const [s, ns] = time;
  if (Number.isInteger(s) && Number.isInteger(ns) && s >= 0 && s < 1e15 && ns >= 0 && ns < 1e9)
    return s === 0 ? String(ns) : `${s}${String(ns).padStart(9, "0")}`;
  return (BigInt(Math.trunc(s)) * 1_000_000_000n + BigInt(Math.trunc(ns))).toString();
}

/** The SDK's toAnyValue, as JSON: `{"stringValue":…}`, `{"intValue":…}`, … and `{}` for what it cannot say. */
export function anyValueJson(value: unknown): string {
  switch (typeof value) {
    case "string":
      return `{"stringValue":${JSON.stringify(value)}}`;
    case "number":
      return Number.isInteger(value) ? `{"intValue":${numberJson(value)}}` : `{"doubleValue":${numberJson(value)}}`;
    case "boolean":
      return `{"boolValue":${value}}`;
    case "object": {
      if (value === null) return "{}";
      if (value instanceof Uint8Array) return `{"bytesValue":${JSON.stringify(Buffer.from(value).toString("base64"))}}`;
      if (Array.isArray(value)) return `{"arrayValue":{"values":[${value.map(anyValueJson).join(",")}]}}`;
      return `{"kvlistValue":{"values":${keyValuesJson(value as Readonly<Record<string, unknown>>)}}}`;
    }
    default:
      return "{}";
  }
}

/** The SDK's toAttributes, as JSON: `[{"key":…,"value":{…}},…]`, every own key in its order. */
export function keyValuesJson(attributes: Readonly<Record<string, unknown>>): string {
  let out = "[";
  let first = true;
  for (const key of Object.keys(attributes)) {
    out += `${first ? "" : ","}{"key":${JSON.stringify(key)},"value":${anyValueJson(attributes[key])}}`;
    first = false;
  }
  return `${out}]`;
}

/** The SDK's createResource, as JSON. */
export function resourceJson(resource: Resource): string {
  const schemaUrl =
    resource.schemaUrl !== undefined && resource.schemaUrl !== "" ? `,"schemaUrl":${JSON.stringify(resource.schemaUrl)}` : "";
  return `{"attributes":${keyValuesJson(resource.attributes)},"droppedAttributesCount":0${schemaUrl}}`;
}

/** The SDK's createInstrumentationScope, as JSON. */
export function scopeJson(scope: Scope): string {
  let out = `{"name":${JSON.stringify(scope.name)}`;
  if (scope.version !== undefined) out += `,"version":${JSON.stringify(scope.version)}`;
  if (scope.attributes !== undefined && Object.keys(scope.attributes).length > 0)
    out += `,"attributes":${keyValuesJson(scope.attributes)},"droppedAttributesCount":${numberJson(scope.droppedAttributesCount ?? 0)}`;
  return `${out}}`;
}
