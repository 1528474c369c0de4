export { type ApiRequest, type ApiResponse, handle as handleApiRequest, ROUTES as API_ROUTES } from "./api-server/routes.js";
export { type ApiCredentials, ControlPlaneServer } from "./api-server/server.js";
export {
  DEFAULT_MAX_REQUEST_BYTES,
  DEFAULT_QUEUE_BYTES,
  type DeliveryConfig,
  DeliveryConfigError,
  deliveryConfig,
  FLUSH_ON_EXIT_MS,
} from "./delivery/config.js";
export { MetricsEncoder } from "./delivery/metrics-encoder.js";
export { type OtlpDeliveryOptions, OtlpLogsDelivery, OtlpMetricsDelivery } from "./delivery/otlp-delivery.js";
export {
  type DeliveryEvents,
  DeliveryQueue,
  type DeliveryStats,
  type OutageReport,
  type Outcome,
  type OverflowReport,
  type Tally,
} from "./delivery/queue.js";
export { RequestSlabs } from "./delivery/request-slabs.js";
export { type EncodedRequest, encodeLogs, encodeMetrics, type RequestMemory } from "./delivery/requests.js";
export { exposition, expositionChunks, LINES_PER_CHUNK } from "./exposition.js";
export { type LiveOptions, type LiveStatus, runLive, servingStartMs } from "./live.js";
export { LogsPipeline, type LogsReport, type LogsSink } from "./logs-pipeline.js";
export { ConsoleLogsSink, fanOutLogs, OtlpJsonLinesLogsSink, sdkLogsSink } from "./logs-sinks.js";
export { MetricsPipeline, type ScrapeReport } from "./metrics-pipeline.js";
export { emitOffline, type OfflineOptions, type OfflineResult } from "./offline.js";
export {
  DEFAULT_OTLP_PROTOCOL,
  endpointFromEnv,
  isOtlpProtocol,
  OTLP_GRPC_PORT,
  OTLP_PROTOCOLS,
  type OtlpProtocol,
  protocolFromEnv,
  signalUrl,
} from "./otlp.js";
export { type ContainerLogRotation, KUBELET_LOG_ROTATION, PodLogFiles } from "./pod-log-files.js";
export { RECEIVER_SCOPE_NAME, RECEIVER_SCOPE_VERSION, SCRAPE_REPORT, targetResourceAttributes } from "./receiver.js";
export { type RunSelection, runSelection } from "./run-selection.js";
export { ScrapeServer, SD_PATH, type ServedTarget, targetPath } from "./scrape-server.js";
export { type EncodedMetricsSink, fanOutMetrics, type MetricsSink, metricsKept, OtlpJsonLinesSink, sdkMetricsSink } from "./sinks.js";
export { ManualClock, SYSTEM_CLOCK, type WallClock } from "./wall-clock.js";
export { type EncodedScrape, encodeScrape, type WireFormat } from "./wire.js";
export { ShardWorkers, workerShards } from "./workers/shard-workers.js";
export { releaseShared, SharedSlabs } from "./workers/shared-slabs.js";
export { type AnswerOptions, type Answers, answerCalls, type Calls, WorkerThread, workerScript } from "./workers/thread.js";
