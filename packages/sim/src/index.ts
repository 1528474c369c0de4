export { Simulation, type ClusterView, type EventListener, type SimulationOptions } from "./simulation.js";
export type { DomainEvent, DomainEventKind, FailureCause, GpuRef, PendingReason, PodPlacement, QueueState, WorkloadRef } from "./events.js";
export type { Gpu, GpuHealth, Node, NodeStatus, Pod, Pool, Queue, Workload, WorkloadPhase } from "./world.js";
export { Rng } from "./rng.js";
export { divideFairShare, type ShareClaim } from "./fair-share.js";
export { SummaryCollector, type Summary, type SummaryRow } from "./summary.js";
