/**
 * The one fold of domain events into workload records: each workload's transitions with their
 * exact times, its pods (one set per start: KAI deletes a victim's pods and the controller
 * creates new ones) and how it ended. The control plane's API, the calibration measurements and
 * the run summary all read these records instead of folding the events themselves.
 *
 * Records are kept while a workload is live and for `retentionMs` after it ended, so memory
 * stays bounded on long runs; `forgetEnded` drops the older ones and hands each to `onForget`
 * first (the summary tallies them there).
 */
import { type DomainEvent, type PendingReason, type PodPlacement, unhandledEvent, type WorkloadRef } from "./domain-events.js";
import type { ClusterView } from "./simulation.js";

export type PodPhase = "Pending" | "Running" | "Succeeded" | "Failed";
/** The workload's phase as the control plane reports it; a deleted workload keeps the last one. */
export type LedgerPhase = "Pending" | "Running" | "Completed" | "Failed";
/** How a workload ended: ran to completion, failed, or deleted by its user. */
export type WorkloadEnding = "completed" | "failed" | "cancelled";

export interface PodRecord {
  /** Dense number for snapshots. */
  readonly serial: number;
  readonly uid: string;
  readonly name: string;
  readonly workload: WorkloadRecord;
  /** Simulated ms (since the blueprint's start), like every time below. */
  readonly createdAt: number;
  node: string | null;
  pool: string | null;
  gpus: PodPlacement["gpus"];
  startedAt: number | null;
  completedAt: number | null;
  /** Set when the pod was deleted (its workload preempted or deleted). */
  deletedAt: number | null;
  phase: PodPhase;
  phaseUpdatedAt: number;
}

/** One start of a workload: where, when, and how it ended (null while it runs). */
export interface RunRecord {
  readonly pool: string;
  readonly gpus: number;
  readonly startedAt: number;
  endedAt: number | null;
  endedBy: "preempted" | WorkloadEnding | null;
}

export interface WorkloadRecord {
  readonly ref: WorkloadRef;
  readonly requestedNodePools: readonly string[];
  readonly submittedAt: number;
  phase: LedgerPhase;
  phaseUpdatedAt: number;
  /** The pods' phase as Kubernetes reports it. */
  k8sPhase: PodPhase;
  currentPool: string | null;
  /** Its starts, first to last. */
  readonly runs: RunRecord[];
  completedAt: number | null;
  /** Set when a user deleted the workload (gave up waiting, or cancelled it while running). */
  deletedAt: number | null;
  ending: WorkloadEnding | null;
  /** The quota reason from the scheduler's last unschedulable report, while pending. */
  phaseReason: "NonPreemptibleOverQuota" | "OverLimit" | null;
  /** Time accumulated in Pending and Running, up to `phaseUpdatedAt`. */
  pendingMs: number;
  runningMs: number;
  readonly pods: PodRecord[];
}

export interface WorkloadLedgerOptions {
  /** How long a record is kept after its workload ended (simulated ms). */
  readonly retentionMs: number;
  /** Called for each record as it is forgotten. */
  readonly onForget?: (record: WorkloadRecord) => void;
}

export class WorkloadLedger {
  private readonly byUid = new Map<string, WorkloadRecord>();
  private readonly podsByUid = new Map<string, PodRecord>();
  private nextSerial = 0;

  constructor(private readonly options: WorkloadLedgerOptions) {}

  workloads(): IterableIterator<WorkloadRecord> {
    return this.byUid.values();
  }

  workload(uid: string): WorkloadRecord | undefined {
    return this.byUid.get(uid);
  }

  pod(uid: string): PodRecord | undefined {
    return this.podsByUid.get(uid);
  }

  readonly record = (event: DomainEvent): void => {
    switch (event.kind) {
      case "WorkloadSubmitted":
        this.byUid.set(event.workload.uid, {
          ref: event.workload,
          requestedNodePools: event.nodePools,
          submittedAt: event.t,
          phase: "Pending",
          phaseUpdatedAt: event.t,
          k8sPhase: "Pending",
          currentPool: null,
          runs: [],
          completedAt: null,
          deletedAt: null,
          ending: null,
          phaseReason: null,
          pendingMs: 0,
          runningMs: 0,
          pods: [],
        });
        return;
      case "WorkloadUnschedulable": {
        const w = this.byUid.get(event.workload.uid);
        if (w !== undefined) w.phaseReason = quotaReason(event.reasons);
        return;
      }
      case "WorkloadStarted": {
        const w = this.byUid.get(event.workload.uid);
        if (w === undefined) return;
        this.transition(w, "Running", event.t);
        w.k8sPhase = "Running";
        w.currentPool = event.nodePool;
        w.runs.push({ pool: event.nodePool, gpus: event.workload.gpus, startedAt: event.t, endedAt: null, endedBy: null });
        w.phaseReason = null;
        for (const placement of event.pods) {
          const pod = this.podsByUid.get(placement.uid) ?? this.addPod(w, placement, event.t);
          pod.node = placement.node;
          pod.pool = event.nodePool;
          pod.gpus = placement.gpus;
          pod.startedAt = event.t;
          setPodPhase(pod, "Running", event.t);
        }
        return;
      }
      case "WorkloadPreempted": {
        const w = this.byUid.get(event.workload.uid);
        if (w === undefined) return;
        this.transition(w, "Pending", event.t);
        w.k8sPhase = "Pending";
        w.currentPool = null;
        endRun(w, event.t, "preempted");
        // KAI deletes the victim's pods; the controller creates new ones (new UIDs).
        for (const pod of w.pods) if (pod.deletedAt === null) pod.deletedAt = event.t;
        return;
      }
      case "WorkloadCompleted":
      case "WorkloadFailed": {
        const w = this.byUid.get(event.workload.uid);
        if (w === undefined) return;
        const succeeded = event.kind === "WorkloadCompleted";
        this.transition(w, succeeded ? "Completed" : "Failed", event.t);
        w.k8sPhase = succeeded ? "Succeeded" : "Failed";
        w.completedAt = event.t;
        w.ending = succeeded ? "completed" : "failed";
        endRun(w, event.t, w.ending);
        // KAI's stale-gang eviction deletes the ranks still running.
        if (event.kind === "WorkloadFailed" && event.staleGang !== undefined)
          for (const pod of w.pods) if (pod.deletedAt === null && pod.completedAt === null) pod.deletedAt = event.t;
        for (const pod of w.pods) {
          if (pod.deletedAt !== null || pod.completedAt !== null) continue;
          pod.completedAt = event.t;
          setPodPhase(pod, succeeded ? "Succeeded" : "Failed", event.t);
        }
        return;
      }
      case "RankFailed": {
        const pod = this.podsByUid.get(event.pod.uid);
        if (pod === undefined || pod.completedAt !== null) return;
        pod.completedAt = event.t;
        setPodPhase(pod, "Failed", event.t);
        return;
      }
      case "WorkloadCancelled": {
        const w = this.byUid.get(event.workload.uid);
        if (w === undefined) return;
        // A user deleted it: the control plane keeps it only among the deleted ones.
        this.transition(w, w.phase, event.t);
        w.deletedAt = event.t;
        w.ending = "cancelled";
        w.currentPool = null;
        endRun(w, event.t, "cancelled");
        for (const pod of w.pods) if (pod.deletedAt === null) pod.deletedAt = event.t;
        return;
      }
      // Kinds this fold ignores, listed so that a new kind is a compile error until decided here.
      case "GpuPowerCap":
      case "GpuFault":
      case "ContainerCrashed":
      case "ContainerRestarted":
      case "NodeMemoryPressure":
      case "NodeMemoryPressureRelieved":
      case "GpuResetStarted":
      case "GpuResetCompleted":
      case "NodeCordoned":
      case "NodeRebootStarted":
      case "NodeReady":
      case "SchedulingCycle":
      case "WorkloadPipelined":
        return;
      default:
        unhandledEvent(event);
    }
  };

  /** Adds the pods that controllers created and the scheduler has not placed yet. */
  addPendingPods(view: ClusterView): void {
    for (const w of view.pending) {
      const record = this.byUid.get(w.uid);
      if (record === undefined) continue;
      for (const p of w.pendingPods)
        if (!this.podsByUid.has(p.uid)) this.addPod(record, { name: p.name, uid: p.uid, node: "", gpus: [] }, p.createdAt);
    }
  }

  /** Forgets the workloads that ended more than the retention before simulated time `now`. */
  forgetEnded(now: number): void {
    for (const [uid, w] of this.byUid) {
      const over = w.deletedAt ?? w.completedAt;
      if (over === null || now - over <= this.options.retentionMs) continue;
      this.options.onForget?.(w);
      for (const pod of w.pods) this.podsByUid.delete(pod.uid);
      this.byUid.delete(uid);
    }
  }

  /** Time spent pending and running up to simulated time `now`. */
  static times(w: WorkloadRecord, now: number): { pendingMs: number; runningMs: number } {
    const open = w.completedAt === null && w.deletedAt === null ? now - w.phaseUpdatedAt : 0;
    return {
      pendingMs: w.pendingMs + (w.phase === "Pending" ? open : 0),
      runningMs: w.runningMs + (w.phase === "Running" ? open : 0),
    };
  }

  private transition(w: WorkloadRecord, phase: LedgerPhase, t: number): void {
    const spent = t - w.phaseUpdatedAt;
    if (w.phase === "Pending") w.pendingMs += spent;
    else if (w.phase === "Running") w.runningMs += spent;
    w.phase = phase;
    w.phaseUpdatedAt = t;
  }

  private addPod(w: WorkloadRecord, placement: PodPlacement, createdAt: number): PodRecord {
    const pod: PodRecord = {
      serial: this.nextSerial++,
      uid: placement.uid,
      name: placement.name,
      workload: w,
      createdAt,
      node: null,
      pool: null,
      gpus: [],
      startedAt: null,
      completedAt: null,
      deletedAt: null,
      phase: "Pending",
      phaseUpdatedAt: createdAt,
    };
    w.pods.push(pod);
    this.podsByUid.set(pod.uid, pod);
    return pod;
  }
}

/** Ends the run in progress, if any (a workload cancelled while pending has none). */
function endRun(w: WorkloadRecord, t: number, by: NonNullable<RunRecord["endedBy"]>): void {
  const run = w.runs.at(-1);
  if (run === undefined || run.endedAt !== null) return;
  run.endedAt = t;
  run.endedBy = by;
}

/** The first start, or undefined for a workload that never ran. */
export function firstRun(w: WorkloadRecord): RunRecord | undefined {
  return w.runs[0];
}

function setPodPhase(pod: PodRecord, phase: PodPhase, t: number): void {
  pod.phase = phase;
  pod.phaseUpdatedAt = t;
}

/** The API's phaseReason: KAI's two quota reasons; "no node fits" has no phaseReason value. */
function quotaReason(reasons: readonly PendingReason[]): WorkloadRecord["phaseReason"] {
  for (const r of reasons) if (r.reason === "NonPreemptibleOverQuota" || r.reason === "OverLimit") return r.reason;
  return null;
}
