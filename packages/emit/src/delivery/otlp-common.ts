/**
 * The parts of OTLP that metrics and logs requests share — AnyValue, KeyValue, Resource,
 * InstrumentationScope (opentelemetry-proto common.proto, resource.proto) — written back to front
 * (protobuf-writer.ts) exactly as the SDK's common serializer writes them
 * (@opentelemetry/otlp-transformer, common/protobuf/common-serializer.ts), for gpusynth's
 * encoders (metrics-encoder.ts, logs-encoder.ts).
 */

import type { Resource } from "@opentelemetry/resources";
import { ReverseWriter, tag } from "./protobuf-writer.js";

const RESOURCE_ATTRIBUTES = tag(1, 2);
const RESOURCE_DROPPED_ATTRIBUTES = tag(2, 0);
const SCOPE_NAME = tag(1, 2);
const SCOPE_VERSION = tag(2, 2);
const SCOPE_ATTRIBUTES = tag(3, 2);
const SCOPE_DROPPED_ATTRIBUTES = tag(4, 0);
const KEY_VALUE_KEY = tag(1, 2);
const KEY_VALUE_VALUE = tag(2, 2);
const ANY_STRING = tag(1, 2);
const ANY_BOOL = tag(2, 0);
const ANY_INT = tag(3, 0);
const ANY_DOUBLE = tag(4, 1);

/**
 * Attributes as metrics (Attributes) and logs (AnyValueMap) hold them: a value that is not a
 * string, number or boolean is the SDK serializer's to write.
 */
export type AnyAttributes = Readonly<Record<string, unknown>>;

/** An instrumentation scope as the SDK hands it over, with what a scope may carry beyond name and version. */
export interface Scope {
  readonly name: string;
  readonly version?: string | undefined;
  readonly schemaUrl?: string | undefined;
  readonly attributes?: AnyAttributes | undefined;
  readonly droppedAttributesCount?: number | undefined;
}

/** Something only the SDK's serializer writes: the encoder gives the request up to it. */
export class Unsupported extends Error {}

/** Writes one AnyValue's fields (back to front), as the SDK's writeAnyValue chooses them. */
export function writeAnyValue(w: ReverseWriter, value: unknown): void {
  if (typeof value === "string") {
    w.string(value);
    w.byte(ANY_STRING);
  } else if (typeof value === "boolean") {
    w.uint32(value ? 1 : 0);
    w.byte(ANY_BOOL);
  } else if (typeof value === "number") {
    // int_value for integers in the int64 range, double_value for the rest.
    if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
      w.int64(value);
      w.byte(ANY_INT);
    } else {
      w.double(value);
      w.byte(ANY_DOUBLE);
    }
  } else {
    throw new Unsupported("a value that is not a string, number or boolean");
  }
}

/** One `attributes` entry: the field's tag, its length and the KeyValue. */
export function writeKeyValue(w: ReverseWriter, field: number, key: string, value: unknown): void {
  const end = w.mark();
  const valueEnd = w.mark();
  writeAnyValue(w, value);
  w.delimit(KEY_VALUE_VALUE, valueEnd);
  w.string(key);
  w.byte(KEY_VALUE_KEY);
  w.delimit(field, end);
}

/** Every own attribute as `field` entries, in the object's key order. */
export function writeAttributes(w: ReverseWriter, field: number, attributes: AnyAttributes): void {
  const keys = Object.keys(attributes);
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i] as string;
    writeKeyValue(w, field, key, attributes[key]);
  }
}

/** A Resource as the field `field` of its parent (ResourceMetrics, ResourceLogs). */
export function writeResourceField(w: ReverseWriter, resource: Resource, field: number): void {
  const end = w.mark();
  w.uint32(0); // dropped_attributes_count: the SDK writes 0
  w.byte(RESOURCE_DROPPED_ATTRIBUTES);
  if (resource.attributes) writeAttributes(w, RESOURCE_ATTRIBUTES, resource.attributes);
  w.delimit(field, end);
}

/** An instrumentation scope as the field `field` of its parent (ScopeMetrics, ScopeLogs). */
export function writeScopeField(w: ReverseWriter, scope: Scope, field: number): void {
  const end = w.mark();
  if (scope.droppedAttributesCount) {
    w.uint32(scope.droppedAttributesCount);
    w.byte(SCOPE_DROPPED_ATTRIBUTES);
  }
  if (scope.attributes) writeAttributes(w, SCOPE_ATTRIBUTES, scope.attributes);
  if (scope.version) {
    w.string(scope.version);
    w.byte(SCOPE_VERSION);
  }
  w.string(scope.name);
  w.byte(SCOPE_NAME);
  w.delimit(field, end);
}

/** Where kept parts are written before they are copied out: one for all, as encoding is synchronous. */
export const partWriter = new ReverseWriter(4096);

/** Bytes written on their own: a kept part of later messages (a Resource, a scope, a metric's header, a time block). */
export function encodePart<S>(write: (w: ReverseWriter, subject: S) => void, subject: S): Uint8Array {
  partWriter.reset();
  write(partWriter, subject);
  return partWriter.finish();
}

/**
 * `key`'s part from `parts`, written by `write` the first time `key` is met. `write` is handed the
 * key rather than capturing it: a closure made at each call would cost an object (and a context
 * for what it captures) every time a part is looked up, tens of thousands a scrape.
 */
export function keptPart<K extends object>(parts: WeakMap<K, Uint8Array>, key: K, write: (w: ReverseWriter, key: K) => void): Uint8Array {
  let part = parts.get(key);
  if (part === undefined) {
    part = encodePart(write, key);
    parts.set(key, part);
  }
  return part;
}
