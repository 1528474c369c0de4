export { formatDuration, parseDuration } from "./duration.js";
export { GPU_MODELS, type GpuModel, type GpuModelId, POWER_CAP_FRACTION, pciBusId, powerCapPace } from "./gpu-models.js";
export { blueprintJsonSchema } from "./json-schema.js";
export { type LoadedBlueprint, loadBlueprint, MAX_BLUEPRINT_BYTES, MAX_NESTING_DEPTH, parseBlueprint } from "./load.js";
export { BUILT_IN_PRIORITY_CLASSES, isPreemptible, type PriorityClass } from "./priority-classes.js";
export { BlueprintError, type BlueprintProblem, formatPath, formatProblem } from "./problems.js";
export {
  BEARER_TOKEN,
  type Blueprint,
  type BlueprintInput,
  blueprintSchema,
  CALIBRATION_METRICS,
  type CalibrationMetric,
  type Cdf,
  type Department,
  EARLIEST_START_MS,
  type Ending,
  type Faults,
  LATEST_START_MS,
  MAX_BLUEPRINT_DURATION_MS,
  MAX_GPUS,
  MAX_NODES,
  type NodePool,
  OPTIONAL_DCGM_COUNTERS,
  type OptionalDcgmCounter,
  OTLP_TIME_END_MS,
  type Project,
  type Submission,
  type WorkloadGenerator,
  type WorkloadKind,
  type WorkloadType,
} from "./schema.js";
export { nodeCpus, nodeMemoryBytes, nodeName, type PodShape, podShape } from "./shape.js";
export { DEVICE_PLUGIN_IGNORED_XIDS, devicePluginIgnores, XID_CATALOGUE, type XidEffect, type XidEntry } from "./xid-catalogue.js";
