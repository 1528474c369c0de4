/**
 * OTLP ExportLogsServiceRequest in the OTLP JSON encoding (an `--otlp-json-logs` file's line, an
 * http/json export), written as the SDK's JsonLogsSerializer writes it
 * (@opentelemetry/otlp-transformer: JSON.stringify of its createExportLogsServiceRequest with the
 * JSON encoder) — records grouped by Resource and then by scope as objects, in the order first
 * met; the same keys in the same order, those it leaves out left out — keeping what repeats, as
 * the protobuf encoder (logs-encoder.ts) does:
 *
 * - each Resource's and scope's text, per object;
 * - a record's attributes' text, when they are those of the record before (the SDK gives each
 *   record its own copy of a container log's three).
 *
 * packages/emit/test/logs-encoder.test.ts compares the two on every shipped blueprint.
 */

import type { Resource } from "@opentelemetry/resources";
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { anyValueJson, hrTimeJson, keyValuesJson, numberJson, resourceJson, scopeJson } from "./json-common.js";
import { groupsOf, sameAttributes } from "./logs-encoder.js";
import type { AnyAttributes, Scope } from "./otlp-common.js";

export class JsonLogsEncoder {
  private readonly resources = new WeakMap<Resource, string>();
  private readonly scopes = new WeakMap<Scope, string>();
  /** The attributes last written (a copy) and their text. */
  private lastAttributes: AnyAttributes | undefined;
  private lastAttributesJson = "";

  /** The request as an OTLP JSON string. */
  encode(records: readonly ReadableLogRecord[]): string {
    let out = '{"resourceLogs":[';
    groupsOf(records).forEach(({ resource, scopes }, r) => {
      if (r > 0) out += ",";
      out += `{"resource":${keptText(this.resources, resource, resourceJson)},"scopeLogs":[`;
      scopes.forEach(({ scope, records: scoped }, s) => {
        if (s > 0) out += ",";
        out += `{"scope":${keptText(this.scopes, scope, scopeJson)},"logRecords":[`;
        for (let i = 0; i < scoped.length; i++) {
          if (i > 0) out += ",";
          out += this.recordJson(scoped[i] as ReadableLogRecord);
        }
        out += "]";
        if (scope.schemaUrl !== undefined) out += `,"schemaUrl":${JSON.stringify(scope.schemaUrl)}`;
        out += "}";
      });
      out += "]";
      // The SDK writes a resource's schema URL twice: in the resource, and after it in ResourceLogs.
      if (resource.schemaUrl !== undefined && resource.schemaUrl !== "") out += `,"schemaUrl":${JSON.stringify(resource.schemaUrl)}`;
      out += "}";
    });
    return `${out}]}`;
  }

  /** The SDK's toLogRecord, as JSON.stringify writes it: its keys in order, undefined ones left out. */
  private recordJson(record: ReadableLogRecord): string {
    let out = `{"timeUnixNano":"${hrTimeJson(record.hrTime)}","observedTimeUnixNano":"${hrTimeJson(record.hrTimeObserved)}"`;
    if (record.severityNumber !== undefined) out += `,"severityNumber":${numberJson(record.severityNumber)}`;
    if (record.severityText !== undefined) out += `,"severityText":${JSON.stringify(record.severityText)}`;
    out += `,"body":${anyValueJson(record.body)}`;
    if (record.eventName !== undefined) out += `,"eventName":${JSON.stringify(record.eventName)}`;
    out += `,"attributes":${this.attributesJson(record.attributes)}`;
    if (record.droppedAttributesCount !== undefined) out += `,"droppedAttributesCount":${numberJson(record.droppedAttributesCount)}`;
    const span = record.spanContext;
    if (span !== undefined) {
      if (span.traceFlags !== undefined) out += `,"flags":${numberJson(span.traceFlags)}`;
      if (span.traceId !== undefined) out += `,"traceId":${JSON.stringify(span.traceId)}`;
      if (span.spanId !== undefined) out += `,"spanId":${JSON.stringify(span.spanId)}`;
    }
    return `${out}}`;
  }

  private attributesJson(attributes: AnyAttributes): string {
    if (this.lastAttributes !== undefined && sameAttributes(attributes, this.lastAttributes)) return this.lastAttributesJson;
    this.lastAttributesJson = keyValuesJson(attributes);
    // A copy: the text stands for these values, whatever becomes of the record's object.
    this.lastAttributes = { ...attributes };
    return this.lastAttributesJson;
  }
}

/** `key`'s text, written once by `write` and kept for as long as the key lives. */
function keptText<K extends object>(texts: WeakMap<K, string>, key: K, write: (key: K) => string): string {
  let text = texts.get(key);
  if (text === undefined) {
    text = write(key);
    texts.set(key, text);
  }
  return text;
}
