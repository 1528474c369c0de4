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
export { unhandledEvent } from "./domain-events.js";
export { divideFairShare, type ShareClaim } from "./fair-share.js";
export { Rng } from "./rng.js";
export {
  type ClusterView,
  type DeepReadonly,
  EVICTION_HARD_MEMORY_BYTES,
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
export type { FinishedPod, Gpu, GpuHealth, Node, NodeStatus, Pod, PodIdentity, Pool, Queue, Workload, WorkloadPhase } from "./world.js";
export { projectNamespace } from "./world.js";
