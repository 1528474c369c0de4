/**
 * An in-process OTLP/gRPC metrics receiver for tests: a real gRPC server for
 * opentelemetry.proto.collector.metrics.v1.MetricsService/Export that decodes requests with the
 * protobuf code OpenTelemetry generated from the official OTLP .proto files (shipped in
 * @opentelemetry/otlp-transformer 0.52, installed as the dev dependency otlp-proto-root).
 */
import { createRequire } from "node:module";
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";

const require = createRequire(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: generated protobuf code has no types we can import
const root: any = require("otlp-proto-root/build/src/generated/root");
const Request = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
const Response = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
const LogsRequest = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
const LogsResponse = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;

/** A decoded logs request: enums as names, 64-bit integers as strings. */
export type ExportLogsRequest = {
  resourceLogs: Array<{
    resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> };
    scopeLogs: Array<{
      scope?: { name?: string; version?: string };
      logRecords: Array<{
        timeUnixNano?: string;
        observedTimeUnixNano?: string;
        severityNumber?: string;
        severityText?: string;
        body?: { stringValue?: string };
        attributes?: Array<{ key: string; value: Record<string, unknown> }>;
      }>;
    }>;
  }>;
};

/** A decoded request as plain data: enums as names, 64-bit integers as strings. */
export type ExportRequest = {
  resourceMetrics: Array<{
    resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> };
    scopeMetrics: Array<{ scope: { name: string; version?: string }; metrics: OtlpMetric[] }>;
  }>;
};

export interface OtlpNumberPoint {
  attributes?: Array<{ key: string; value: { stringValue?: string } }>;
  startTimeUnixNano?: string;
  timeUnixNano: string;
  asDouble?: number;
  asInt?: string;
}

export interface OtlpMetric {
  name: string;
  description?: string;
  unit?: string;
  gauge?: { dataPoints: OtlpNumberPoint[] };
  sum?: { dataPoints: OtlpNumberPoint[]; aggregationTemporality: string; isMonotonic?: boolean };
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  /** The metrics requests received, as plain data (made when first read: counting needs none). */
  readonly requests: ExportRequest[];
  readonly logRequests: ExportLogsRequest[];
  /** The requests as the generated code decoded them (message instances), in arrival order. */
  readonly decoded: { readonly metrics: readonly unknown[]; readonly logs: readonly unknown[] };
  /** Encoded size of every request received (both signals), in arrival order. */
  readonly sizes: number[];
  /** Date.now() at each request's arrival (both signals). */
  readonly arrivals: number[];
  /** Makes the next `n` exports fail with UNAVAILABLE (a collector that is down). */
  failNext(n: number): void;
  close(): Promise<void>;
  /** Stops at once, dropping connections and calls in flight: a collector that crashed. */
  kill(): void;
}

/** Data points in the metrics requests received (counted on the decoded messages, without making plain data of them). */
export function receivedPoints(receiver: Receiver): number {
  let n = 0;
  for (const r of receiver.decoded.metrics as ExportRequest[])
    for (const rm of r.resourceMetrics)
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) n += (m.gauge ?? m.sum)?.dataPoints.length ?? 0;
  return n;
}

/** Log records in the logs requests received. */
export function receivedRecords(receiver: Receiver): number {
  let n = 0;
  for (const r of receiver.decoded.logs as ExportLogsRequest[])
    for (const rl of r.resourceLogs) for (const sl of rl.scopeLogs) n += sl.logRecords.length;
  return n;
}

/** A unary OTLP Export method whose messages the generated protobuf code encodes and decodes. */
// biome-ignore lint/suspicious/noExplicitAny: generated protobuf message classes are untyped
function exportService(path: string, request: any, response: any, sizes: number[], arrivals: number[]): ServiceDefinition {
  return {
    Export: {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: unknown) => Buffer.from(request.encode(value).finish()),
      requestDeserialize: (bytes: Buffer) => {
        sizes.push(bytes.length);
        arrivals.push(Date.now());
        return request.decode(bytes);
      },
      responseSerialize: (value: unknown) => Buffer.from(response.encode(value).finish()),
      responseDeserialize: (bytes: Buffer) => response.decode(bytes),
    },
  };
}

/**
 * A receiver with grpc-js' default limits (4 MiB per message, as the collector's OTLP receiver),
 * on `port` when given (a collector coming back where it was), else on a free one.
 */
export async function startReceiver(port = 0): Promise<Receiver> {
  const decoded = { metrics: [] as unknown[], logs: [] as unknown[] };
  const requests = plainData(decoded.metrics, Request) as ExportRequest[] & { refresh(): void };
  const logRequests = plainData(decoded.logs, LogsRequest) as ExportLogsRequest[] & { refresh(): void };
  const sizes: number[] = [];
  const arrivals: number[] = [];
  let failures = 0;
  const logsService = exportService(
    "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
    LogsRequest,
    LogsResponse,
    sizes,
    arrivals,
  );
  const service = exportService("/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", Request, Response, sizes, arrivals);
  const implementation: UntypedServiceImplementation = {
    Export: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      if (failures > 0) {
        failures--;
        callback({ code: status.UNAVAILABLE, details: "collector is down" });
        return;
      }
      decoded.metrics.push(call.request);
      callback(null, {});
    },
  };
  const server = new Server();
  server.addService(service, implementation);
  server.addService(logsService, {
    Export: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      decoded.logs.push(call.request);
      callback(null, {});
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error, at) => (error ? reject(error) : resolve(at))),
  );
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    get requests() {
      requests.refresh();
      return requests;
    },
    get logRequests() {
      logRequests.refresh();
      return logRequests;
    },
    decoded,
    sizes,
    arrivals,
    kill: () => server.forceShutdown(),
    failNext: (n) => {
      failures = n;
    },
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

/**
 * An array of the plain data of `messages` (enums as names, 64-bit integers as strings), which
 * `refresh()` extends with the messages that arrived since: a receiver converts only what a test reads.
 */
// biome-ignore lint/suspicious/noExplicitAny: generated protobuf message classes are untyped
function plainData(messages: readonly unknown[], type: any): unknown[] & { refresh(): void } {
  const plain = [] as unknown as unknown[] & { refresh(): void };
  Object.defineProperty(plain, "refresh", {
    value: () => {
      while (plain.length < messages.length)
        plain.push(type.toObject(messages[plain.length], { longs: String, enums: String, defaults: false }));
    },
  });
  return plain;
}

export function attributeMap(attributes: Array<{ key: string; value: Record<string, unknown> }> | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]));
}
