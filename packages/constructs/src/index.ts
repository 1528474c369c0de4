export {
  flattened,
  KEPT_JSON,
  KEPT_OTLP,
  KEPT_TEXT,
  type KubernetesEndpoint,
  LABEL_PATTERN,
  type LabelSet,
  type LogRecordOut,
  listedTarget,
  type MetricConstruct,
  type MetricFamily,
  type MetricType,
  type Sample,
  type ScrapeTarget,
  SERIES_LABELS,
  SeriesColumns,
  samplesKept,
  seriesLabels,
  seriesOf,
  type TargetSamples,
  targetsKept,
} from "./catalogue.js";
export { BLUEPRINT_CALENDAR, LiveClock, type StampClock } from "./clock.js";
export { ALL_LOG_SOURCES, ClusterLogs, ClusterMetrics, type LogSources, type LogWriting } from "./cluster.js";
export { ClusterRun, type ClusterRunOptions, type Frame, frameKept } from "./cluster-run.js";
export { xidMessage } from "./dcgm-exporter/xid-messages.js";
export { GpuActivityModel, type GpuIdentity, type GpuReading } from "./gpu/activity.js";
export { Board, type BoardTraits } from "./gpu/board.js";
export { type Load, NO_CONTEXT, type Rhythm, type RunOf, rhythmOf } from "./gpu/load.js";
export { type Capture, type CapturePhase, type CaptureRow, captureRows, replayCapture } from "./gpu/replay.js";
export { GpuTimelines, type Run } from "./gpu/timeline.js";
export { queueName } from "./kai-scheduler/index.js";
export { ksmLabelName } from "./kube-state-metrics/families.js";
export { ImagePulls } from "./kubelet/image-pulls.js";
export { K8S_EVENTS_SCOPE } from "./kubernetes-events/events.js";
export { type AsyncConsumer, type DriveOptions, drive, driveAsync, type EveryOptions, every } from "./run-driver.js";
export * as runaiApi from "./runai-api/index.js";
export { MAX_SHARD_GPUS, type Shard, ShardFilter, shardGpus, WHOLE_RUN } from "./shard.js";
