/**
 * In-process OTLP receivers for tests, metrics and logs: a real gRPC server for
 * opentelemetry.proto.collector.metrics.v1.MetricsService/Export (and LogsService), or an HTTP
 * server for POST /v1/metrics and /v1/logs in binary protobuf, each decoding requests with the
 * protobuf code OpenTelemetry generated from the official OTLP .proto files (shipped in
 * @opentelemetry/otlp-transformer 0.52, installed as the dev dependency otlp-proto-root).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
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
function exportService(path: string, request: any, response: any, log: ReceivedLog): ServiceDefinition {
  return {
    Export: {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: unknown) => Buffer.from(request.encode(value).finish()),
      requestDeserialize: (bytes: Buffer) => {
        log.sizes.push(bytes.length);
        log.arrivals.push(Date.now());
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
  const log = receivedLog();
  let failures = 0;
  const logsService = exportService("/opentelemetry.proto.collector.logs.v1.LogsService/Export", LogsRequest, LogsResponse, log);
  const service = exportService("/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", Request, Response, log);
  const implementation: UntypedServiceImplementation = {
    Export: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      if (failures > 0) {
        failures--;
        callback({ code: status.UNAVAILABLE, details: "collector is down" });
        return;
      }
      log.decoded.metrics.push(call.request);
      callback(null, {});
    },
  };
  const server = new Server();
  server.addService(service, implementation);
  server.addService(logsService, {
    Export: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      log.decoded.logs.push(call.request);
      callback(null, {});
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error, at) => (error ? reject(error) : resolve(at))),
  );
  return receiver(log, bound, {
    kill: () => server.forceShutdown(),
    failNext: (n) => {
      failures = n;
    },
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  });
}

/**
 * An OTLP/HTTP receiver (binary protobuf, the specification's default protocol) that records what
 * arrives as startReceiver's does: POST /v1/metrics and /v1/logs, answered 200 with an empty Export
 * response, or 503 for the metrics exports `failNext` fails (a collector that is down).
 */
export async function startHttpReceiver(port = 0): Promise<Receiver> {
  const log = receivedLog();
  let failures = 0;
  // biome-ignore lint/suspicious/noExplicitAny: generated protobuf message classes are untyped
  const signals: Record<string, [any, any, unknown[]]> = {
    "/v1/metrics": [Request, Response, log.decoded.metrics],
    "/v1/logs": [LogsRequest, LogsResponse, log.decoded.logs],
  };
  const answer = (request: IncomingMessage, response: ServerResponse, body: Buffer) => {
    const signal = signals[request.url ?? ""];
    if (request.method !== "POST" || signal === undefined) {
      response.writeHead(404).end();
      return;
    }
    if (failures > 0 && request.url === "/v1/metrics") {
      failures--;
      response.writeHead(503).end();
      return;
    }
    const [type, reply, received] = signal;
    log.sizes.push(body.length);
    log.arrivals.push(Date.now());
    received.push(type.decode(body));
    response.writeHead(200, { "content-type": "application/x-protobuf" }).end(Buffer.from(reply.encode({}).finish()));
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => answer(request, response, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return receiver(log, (server.address() as AddressInfo).port, {
    kill: () => {
      server.closeAllConnections();
      server.close();
    },
    failNext: (n) => {
      failures = n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  });
}

/** What a receiver has received: the decoded requests of each signal, and each request's size and arrival. */
interface ReceivedLog {
  readonly decoded: { readonly metrics: unknown[]; readonly logs: unknown[] };
  readonly sizes: number[];
  readonly arrivals: number[];
}

function receivedLog(): ReceivedLog {
  return { decoded: { metrics: [], logs: [] }, sizes: [], arrivals: [] };
}

/** A receiver on `port` over `log`, stopped and failed by `controls`. */
function receiver(log: ReceivedLog, port: number, controls: Pick<Receiver, "kill" | "failNext" | "close">): Receiver {
  const requests = plainData(log.decoded.metrics, Request) as ExportRequest[] & { refresh(): void };
  const logRequests = plainData(log.decoded.logs, LogsRequest) as ExportLogsRequest[] & { refresh(): void };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get requests() {
      requests.refresh();
      return requests;
    },
    get logRequests() {
      logRequests.refresh();
      return logRequests;
    },
    decoded: log.decoded,
    sizes: log.sizes,
    arrivals: log.arrivals,
    ...controls,
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
