export { ClusterIndex, type NodeSlot, type OrgUnit, type PoolSlot } from "./cluster-index.js";
export { apiValueText, ControlPlane, type ControlPlaneOptions, LOOKBACK_MS, type Measurement, snapshotStep } from "./control-plane.js";
export * as entities from "./entities.js";
export { FREE, NOT_REPORTING, type Snapshot, SnapshotHistory } from "./history.js";
export {
  CLUSTER_METRICS,
  type ClusterScope,
  type MeasuredSeries,
  NODE_METRICS,
  ORG_UNIT_METRICS,
  type OrgScope,
  POD_METRICS,
  WORKLOAD_METRICS,
} from "./metrics.js";
export * from "./spec-enums.js";
export {
  DEPARTMENT_TELEMETRY,
  type Group,
  groupSum,
  NODE_TELEMETRY,
  type NodeFilter,
  type OrgFilter,
  PROJECT_TELEMETRY,
  type TelemetryValue,
  WORKLOAD_TELEMETRY,
  type WorkloadFilter,
} from "./telemetry.js";
