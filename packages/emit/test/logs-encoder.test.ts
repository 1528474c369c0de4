/**
 * gpusynth's OTLP logs encoders against the SDK's serializers: byte for byte the same request
 * as ProtobufLogsSerializer, and the same text as JsonLogsSerializer, for the log records every
 * shipped blueprint and scenario writes (Kubernetes events and the scheduler's container log,
 * through the SDK's LoggerProvider as a run sends them), batch after batch (the encoders keep
 * parts from one request to the next), and for what the SDK's records may carry beyond them:
 * severities, event names, numbers, several scopes of one resource. What only the SDK's protobuf
 * serializer writes — a span context, a body that is a map — is left to it; the JSON encoder
 * writes those too.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { K8S_EVENTS_SCOPE } from "@gpusynth/constructs";
import { emitOffline } from "@gpusynth/emit";
import { JsonLogsSerializer, ProtobufLogsSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { describe, expect, it } from "vitest";
import { shippedBlueprints } from "../../cli/src/repo-paths.js";
import { JsonLogsEncoder } from "../src/delivery/json-logs.js";
import { LogsEncoder } from "../src/delivery/logs-encoder.js";

const blueprints = fileURLToPath(new URL("../../../blueprints/", import.meta.url));
const shipped = shippedBlueprints().filter((path) => !path.endsWith("/hyperscale.yaml"));

const sdk = (records: ReadableLogRecord[]): Uint8Array => ProtobufLogsSerializer.serializeRequest(records) ?? new Uint8Array();
const sdkJson = (records: ReadableLogRecord[]): string => Buffer.from(JsonLogsSerializer.serializeRequest(records) ?? []).toString("utf8");

/** The batches of log records a run hands its logs sink, in order. */
async function batchesOf(path: string, durationMs: number): Promise<ReadableLogRecord[][]> {
  const batches: ReadableLogRecord[][] = [];
  await emitOffline(loadBlueprint(path).blueprint, undefined, {
    durationMs,
    intervalMs: 60_000,
    logs: {
      export: async (records) => {
        batches.push(records);
        return true;
      },
      shutdown: async () => {},
    },
  });
  return batches;
}

describe("the OTLP logs encoder", () => {
  it.each(shipped.map((path) => [path.slice(blueprints.length), path]))(
    "writes the SDK serializers' bytes (protobuf) and text (JSON) for every batch of %s's log records",
    async (name, path) => {
      // Platform's scheduler writes thousands of lines a minute: its first minute holds every kind there.
      const minutes = name === "platform.yaml" ? 1 : 10;
      const batches = await batchesOf(path, minutes * 60_000);
      const records = batches.flat();
      expect(records.length).toBeGreaterThan(100);
      // Both receivers' shapes: a container log line (filelog's empty scope) and a k8s_events
      // record (but in the lab, whose first workload comes an hour in, with its events).
      const scopes = new Set(records.map((r) => r.instrumentationScope.name));
      expect(scopes.has("")).toBe(true);
      if (name !== "lab.yaml") expect(scopes.has(K8S_EVENTS_SCOPE.name)).toBe(true);
      const encoder = new LogsEncoder();
      const json = new JsonLogsEncoder();
      const differing = batches.filter((batch) => Buffer.compare(encoder.encode(batch) ?? new Uint8Array(), sdk(batch)) !== 0);
      expect(differing.length).toBe(0);
      const differingJson = batches.filter((batch) => json.encode(batch) !== sdkJson(batch));
      expect(differingJson.length).toBe(0);
      // Parts of the run, as requests are cut: the kept attributes and resources serve them too,
      // across the first batch's end and the middle of the run (every record was compared above).
      const end = (batches[0] as ReadableLogRecord[]).length;
      const half = Math.floor(records.length / 2);
      const around = (at: number) => records.slice(Math.max(0, at - 100), at + 100);
      for (const part of [around(end), around(half), records.slice(3, 7)]) {
        expect(Buffer.compare(encoder.encode(part) ?? new Uint8Array(), sdk(part))).toBe(0);
        expect(json.encode(part)).toBe(sdkJson(part));
      }
    },
  );

  it("writes what the SDK's records may carry beyond gpusynth's, and leaves what only the SDK writes to it", () => {
    const resource = resourceFromAttributes({ "k8s.namespace.name": "runai", "host.cpu.count": 8, ready: true });
    const scope = { name: "a", version: "1.2.3" };
    const other = { name: "b", schemaUrl: "https://opentelemetry.io/schemas/1.24.0" };
    const record = (fields: Partial<ReadableLogRecord>): ReadableLogRecord => ({
      hrTime: [1_767_225_600, 123_456_789],
      hrTimeObserved: [1_767_225_601, 5],
      body: "line",
      resource,
      instrumentationScope: scope,
      attributes: {},
      droppedAttributesCount: 0,
      ...fields,
    });
    const records = [
      record({ severityNumber: 9, severityText: "INFO", attributes: { "log.iostream": "stderr", count: 3 } }),
      record({ instrumentationScope: other, attributes: { "log.iostream": "stderr", count: 3 }, eventName: "k8s.event" }),
      record({ severityNumber: 0, body: 42, attributes: { ratio: 0.25, negative: -7, flag: false }, droppedAttributesCount: 2 }),
      record({ body: 1.5e300, attributes: { "log.iostream": "stderr", count: 4 } }),
    ];
    const encoder = new LogsEncoder();
    expect(Buffer.compare(encoder.encode(records) ?? new Uint8Array(), sdk(records))).toBe(0);
    // Once more: what was kept is written again.
    expect(Buffer.compare(encoder.encode(records) ?? new Uint8Array(), sdk(records))).toBe(0);
    const traced = record({ spanContext: { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1 } });
    const mapped = record({ body: { nested: "map", list: [1, 2.5, "x", true, null], bytes: new Uint8Array([1, 2, 255]) } });
    expect(encoder.encode([traced])).toBeUndefined();
    expect(encoder.encode([mapped])).toBeUndefined();
    // And it goes on after one it gave up.
    expect(Buffer.compare(encoder.encode(records) ?? new Uint8Array(), sdk(records))).toBe(0);

    // The JSON encoder writes all of it, as the SDK's JSON serializer does, twice over.
    const scoped = { name: "c", version: "2", attributes: { team: "x", n: 1 }, droppedAttributesCount: 1, schemaUrl: "" };
    const withSchema = resourceFromAttributes({ a: "b" }, { schemaUrl: "https://opentelemetry.io/schemas/1.24.0" });
    const all = [
      ...records,
      traced,
      mapped,
      record({ instrumentationScope: scoped, body: undefined, severityText: "WARN", attributes: { big: 2 ** 60, inf: Number.NaN } }),
      record({ resource: withSchema, hrTime: [0, 5], hrTimeObserved: [1_767_225_601, 999_999_999] }),
    ];
    const json = new JsonLogsEncoder();
    expect(json.encode(all)).toBe(sdkJson(all));
    expect(json.encode(all)).toBe(sdkJson(all));
    expect(JSON.parse(json.encode(all))).toEqual(JSON.parse(sdkJson(all)));
  });
});
