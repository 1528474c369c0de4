/**
 * OTLP ExportLogsServiceRequest protobuf, byte for byte what the SDK's ProtobufLogsSerializer
 * (@opentelemetry/otlp-transformer, logs/protobuf/logs-serializer.ts) writes for the same
 * records — grouped by Resource and then by instrumentation scope as objects, in the order first
 * met; each record's fields in its order, empty ones left out as it leaves them out — in one pass
 * back to front (protobuf-writer.ts), keeping what repeats:
 *
 * - the Resource and the scope, per object (one per log source's resource for a run's life);
 * - a record's attributes, when they are those of the record before (a container log's records
 *   all carry the same three: the SDK gives each record its own copy, so they are compared).
 *
 * Records that carry what gpusynth never writes — a span context, a body or attribute value that
 * is not a string, number or boolean — are left to the SDK's serializer (encode returns undefined).
 */

import type { Resource } from "@opentelemetry/resources";
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import {
  type AnyAttributes,
  encodePart,
  keptPart,
  type Scope,
  Unsupported,
  writeAnyValue,
  writeKeyValue,
  writeResourceField,
  writeScopeField,
} from "./otlp-common.js";
import { hrTimeHalves, ReverseWriter, tag } from "./protobuf-writer.js";

/** opentelemetry-proto logs.proto's field numbers. */
const REQUEST_RESOURCE_LOGS = tag(1, 2);
const RESOURCE_LOGS_RESOURCE = tag(1, 2);
const RESOURCE_LOGS_SCOPE_LOGS = tag(2, 2);
const RESOURCE_LOGS_SCHEMA_URL = tag(3, 2);
const SCOPE_LOGS_SCOPE = tag(1, 2);
const SCOPE_LOGS_LOG_RECORDS = tag(2, 2);
const SCOPE_LOGS_SCHEMA_URL = tag(3, 2);
const RECORD_TIME = tag(1, 1);
const RECORD_SEVERITY_NUMBER = tag(2, 0);
const RECORD_SEVERITY_TEXT = tag(3, 2);
const RECORD_BODY = tag(5, 2);
const RECORD_ATTRIBUTES = tag(6, 2);
const RECORD_DROPPED_ATTRIBUTES = tag(7, 0);
const RECORD_OBSERVED_TIME = tag(11, 1);
const RECORD_EVENT_NAME = tag(12, 2);

export class LogsEncoder {
  private readonly writer = new ReverseWriter();
  private readonly resources = new WeakMap<Resource, Uint8Array>();
  private readonly scopes = new WeakMap<Scope, Uint8Array>();
  /** Scopes of a name and version alone, by those. */
  private readonly plainScopes = new Map<string, Uint8Array>();
  /** The attributes last written and their entries' bytes. */
  private lastAttributes: AnyAttributes | undefined;
  private lastAttributeBytes = "";

  /** The request's bytes, or undefined when a record holds what only the SDK's serializer writes. */
  encode(records: readonly ReadableLogRecord[]): Uint8Array | undefined {
    const w = this.writer;
    w.reset();
    try {
      const groups = groupsOf(records);
      for (let r = groups.length - 1; r >= 0; r--) {
        const { resource, scopes } = groups[r] as ResourceGroup;
        const end = w.mark();
        if (resource.schemaUrl) {
          w.string(resource.schemaUrl);
          w.byte(RESOURCE_LOGS_SCHEMA_URL);
        }
        for (let s = scopes.length - 1; s >= 0; s--) this.writeScopeLogs(scopes[s] as ScopeGroup);
        w.bytes(this.resourceField(resource));
        w.delimit(REQUEST_RESOURCE_LOGS, end);
      }
      return w.finish();
    } catch (error) {
      if (error instanceof Unsupported) return undefined;
      throw error;
    }
  }

  private writeScopeLogs({ scope, records }: ScopeGroup): void {
    const w = this.writer;
    const end = w.mark();
    if (scope.schemaUrl) {
      w.string(scope.schemaUrl);
      w.byte(SCOPE_LOGS_SCHEMA_URL);
    }
    for (let i = records.length - 1; i >= 0; i--) this.writeRecord(records[i] as ReadableLogRecord);
    w.bytes(this.scopeField(scope));
    w.delimit(RESOURCE_LOGS_SCOPE_LOGS, end);
  }

  private writeRecord(record: ReadableLogRecord): void {
    if (record.spanContext !== undefined) throw new Unsupported("a record with a span context");
    const w = this.writer;
    const end = w.mark();
    if (record.eventName) {
      w.string(record.eventName);
      w.byte(RECORD_EVENT_NAME);
    }
    const [observedLow, observedHigh] = hrTimeHalves(record.hrTimeObserved[0], record.hrTimeObserved[1]);
    w.fixed64(observedLow, observedHigh);
    w.byte(RECORD_OBSERVED_TIME);
    w.uint32(record.droppedAttributesCount);
    w.byte(RECORD_DROPPED_ATTRIBUTES);
    if (record.attributes) this.writeAttributes(record.attributes);
    if (record.body !== undefined) {
      const bodyEnd = w.mark();
      writeAnyValue(w, record.body);
      w.delimit(RECORD_BODY, bodyEnd);
    }
    if (record.severityText) {
      w.string(record.severityText);
      w.byte(RECORD_SEVERITY_TEXT);
    }
    // SeverityNumber.UNSPECIFIED (0) is left out.
    if (record.severityNumber !== undefined && record.severityNumber !== 0) {
      w.uint32(record.severityNumber);
      w.byte(RECORD_SEVERITY_NUMBER);
    }
    const [low, high] = hrTimeHalves(record.hrTime[0], record.hrTime[1]);
    w.fixed64(low, high);
    w.byte(RECORD_TIME);
    w.delimit(SCOPE_LOGS_LOG_RECORDS, end);
  }

  /** The record's attribute entries: the bytes of the record before's when they are equal. */
  private writeAttributes(attributes: AnyAttributes): void {
    const w = this.writer;
    if (this.lastAttributes !== undefined && sameAttributes(attributes, this.lastAttributes)) {
      w.latin1(this.lastAttributeBytes);
      return;
    }
    const mark = w.mark();
    const keys = Object.keys(attributes);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      writeKeyValue(w, RECORD_ATTRIBUTES, key, attributes[key]);
    }
    // A copy: the bytes stand for these values, whatever becomes of the record's object.
    this.lastAttributes = { ...attributes };
    this.lastAttributeBytes = w.latin1Since(mark);
  }

  private resourceField(resource: Resource): Uint8Array {
    return keptPart(this.resources, resource, writeLogsResource);
  }

  /**
   * A scope's field, kept by its name and version where it has nothing else: the SDK's logger
   * keeps one scope object, but a record may come with one of its own (any ReadableLogRecord a
   * caller builds), and the same bytes serve them all.
   */
  private scopeField(scope: Scope): Uint8Array {
    if (scope.attributes !== undefined || scope.droppedAttributesCount) return keptPart(this.scopes, scope, writeLogsScope);
    const key = `${scope.name}\u0000${scope.version ?? ""}`;
    let field = this.plainScopes.get(key);
    if (field === undefined) {
      field = encodePart(writeLogsScope, scope);
      this.plainScopes.set(key, field);
    }
    return field;
  }
}

/** Same keys in the same order, and the same values. */
export function sameAttributes(a: AnyAttributes, b: AnyAttributes): boolean {
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key !== other[i] || a[key] !== b[key]) return false;
  }
  return true;
}

const writeLogsResource = (w: ReverseWriter, resource: Resource): void => writeResourceField(w, resource, RESOURCE_LOGS_RESOURCE);
const writeLogsScope = (w: ReverseWriter, scope: Scope): void => writeScopeField(w, scope, SCOPE_LOGS_SCOPE);

export interface ScopeGroup {
  readonly scope: Scope;
  readonly records: ReadableLogRecord[];
}
export interface ResourceGroup {
  readonly resource: Resource;
  readonly scopes: ScopeGroup[];
  readonly byScope: Map<Scope, ScopeGroup>;
}

/** The records by Resource, then by scope, each in the order first met (the SDK's createResourceMap). */
export function groupsOf(records: readonly ReadableLogRecord[]): ResourceGroup[] {
  const groups: ResourceGroup[] = [];
  const byResource = new Map<Resource, ResourceGroup>();
  let last: ScopeGroup | undefined;
  let lastResource: Resource | undefined;
  for (const record of records) {
    // A source's records come in runs of one resource and scope: the run's group without lookups.
    if (last !== undefined && record.resource === lastResource && record.instrumentationScope === last.scope) {
      last.records.push(record);
      continue;
    }
    let group = byResource.get(record.resource);
    if (group === undefined) {
      group = { resource: record.resource, scopes: [], byScope: new Map() };
      byResource.set(record.resource, group);
      groups.push(group);
    }
    let scope = group.byScope.get(record.instrumentationScope);
    if (scope === undefined) {
      scope = { scope: record.instrumentationScope, records: [] };
      group.byScope.set(record.instrumentationScope, scope);
      group.scopes.push(scope);
    }
    scope.records.push(record);
    last = scope;
    lastResource = record.resource;
  }
  return groups;
}
