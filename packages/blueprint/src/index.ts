export { type Cdf, type Blueprint, type BlueprintInput, type Department, type Faults, type NodePool, type Project, type WorkloadGenerator, type WorkloadKind, type WorkloadType, blueprintSchema } from "./schema.js";
export { loadBlueprint, parseBlueprint, type LoadedBlueprint, MAX_BLUEPRINT_BYTES, MAX_NESTING_DEPTH } from "./load.js";
export { BlueprintError, type BlueprintProblem, formatProblem, formatPath } from "./problems.js";
export { blueprintJsonSchema } from "./json-schema.js";
export { parseDuration, formatDuration } from "./duration.js";
export { GPU_MODELS, type GpuModel, type GpuModelId, pciBusId } from "./gpu-models.js";
export { BUILT_IN_PRIORITY_CLASSES, isPreemptible, type PriorityClass } from "./priority-classes.js";
export { XID_CATALOGUE, type XidEffect, type XidEntry } from "./xid-catalogue.js";
export { nodeName, podShape, type PodShape } from "./shape.js";
