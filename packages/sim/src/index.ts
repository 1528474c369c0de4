export { type CostEstimate, estimateCost } from "./cost-estimate.js";
export type {
  CycleAttemptRef,
  DomainEvent,
  DomainEventKind,
  FailureCause,
  GpuRef,
  PendingReason,
  PodPlacement,
  QueueDivision,
  QueueState,
  WorkloadRef,
} from "./domain-events.js";
export { dataWaitShare, idleCycleAfter, stopsContainers, unhandledEvent } from "./domain-events.js";
export { divideFairShare, type ShareClaim } from "./fair-share.js";
export { Rng } from "./rng.js";
export {
  type ClusterView,
  type DeepReadonly,
  type EventListener,
  podGroupName,
  Simulation,
  type SimulationOptions,
} from "./simulation.js";
export { type Summary, SummaryCollector, type SummaryRow } from "./summary.js";
export { type SimulatedMs, simulatedMs, type UnixMs, unixMs } from "./time.js";
export {
  firstRun,
  type LedgerPhase,
  type PodPhase,
  type PodRecord,
  type RunRecord,
  type WorkloadEnding,
  WorkloadLedger,
  type WorkloadLedgerOptions,
  type WorkloadRecord,
} from "./workload-ledger.js";
export {
  EVICTION_HARD_MEMORY_BYTES,
  type FinishedPod,
  type Gpu,
  type GpuHealth,
  KUBELET_MAX_PODS,
  type Node,
  type NodeResources,
  type NodeStatus,
  nodeResources,
  type Pod,
  type PodIdentity,
  type Pool,
  type PowerCap,
  projectNamespace,
  type Queue,
  type Workload,
  type WorkloadPhase,
} from "./world.js";
