/**
 * What ran on each GPU, and when: the containers' runs, from the moment a container starts
 * (after its image is pulled) to the moment it stops (completed, failed, preempted, crashed).
 * Fed the simulation's events once, by its owner, after the image pulls, so GPU physics can be a
 * pure function of (GPU, time): any reader at any cadence sees the same past.
 */
import { type DomainEvent, dataWaitShare, type PodPlacement, stopsContainers, type WorkloadRef } from "@gpusynth/sim";
import type { ImagePulls } from "../kubelet/image-pulls.js";
import { between } from "../noise.js";
import { type Load, NO_CONTEXT, type Rhythm, type RunOf, rhythmOf } from "./load.js";

/** One container's time on one GPU. */
export interface Run {
  readonly of: RunOf;
  readonly podUid: string;
  readonly rhythm: Rhythm;
  /** How hard the work drives the board, 0.8–1 per workload (a modelling choice: models and batch sizes differ). */
  readonly intensity: number;
  /** When it stopped; Infinity while it runs. */
  to: number;
  /**
   * Where its job ran slower than this GPU could (a straggler elsewhere in a distributed job): the
   * share of each step this GPU waits on the slow one, from `from` (to `to`, or the run's end).
   */
  waits?: Wait[];
  /**
   * What a reader of the GPU's physics has summed of the run so far (activity.ts, RunIntegrals):
   * kept on the run, which lives on one GPU's timeline, rather than in two WeakMaps per GPU.
   */
  integrals?: unknown;
}

/** A stretch of a run spent partly waiting at collectives on a slower rank. */
export interface Wait {
  readonly from: number;
  to: number;
  /** The share of the time waiting: 1 − the job's pace. */
  readonly share: number;
}

/** A stretch of constant load on one GPU. */
export type Piece = (from: number, to: number, load: Load, run: Run | undefined) => void;

export class GpuTimelines {
  private readonly runs = new Map<string, Run[]>();
  /** Per GPU: the last busy instant of the runs dropped (forget) from its timeline. */
  private readonly busyBefore = new Map<string, number>();

  /**
   * `reads`: whether anyone reads the GPUs of a node (a shard reads its own nodes' GPUs, and all of
   * them where it serves Run:ai's per-GPU families); the runs of the others are not kept.
   */
  constructor(
    private readonly pulls: ImagePulls,
    readonly reads: (node: string) => boolean = () => true,
  ) {}

  readonly record = (event: DomainEvent): void => {
    if (event.kind === "WorkloadStarted" || event.kind === "ContainerRestarted") this.start(event.workload, event.pods);
    else if (stopsContainers(event)) this.stop(event.pods, event.t);
    else if (event.kind === "GpuPowerCap" && event.pace !== null)
      for (const w of event.affected) this.paced(w, event.gpu.uuid, event.pace, event.t);
  };

  /**
   * The job runs at `pace` from `t` (a capped GPU sets it): every other GPU of it waits the rest
   * of each step on the slowest at its collectives; the capped GPU itself computes throughout.
   */
  private paced(workload: WorkloadRef, capped: string, pace: number, t: number): void {
    for (const run of this.active.get(workload.uid) ?? []) {
      const open = run.waits?.at(-1);
      if (open !== undefined && open.to === Number.POSITIVE_INFINITY) open.to = t;
      if (pace >= 1 || run.gpu === capped) continue;
      run.waits ??= [];
      run.waits.push({ from: t, to: Number.POSITIVE_INFINITY, share: 1 - pace });
    }
  }
  /** The runs of each running job, by its UID, with their GPU. */
  private readonly active = new Map<string, Set<Run & { readonly gpu: string }>>();

  /** A run that did not come from the simulation (a replayed load, in tests and calibration). */
  add(uuid: string, run: Run): void {
    this.of(uuid).push(run);
  }

  /** The runs of a GPU, oldest first. */
  of(uuid: string): Run[] {
    let runs = this.runs.get(uuid);
    if (runs === undefined) {
      runs = [];
      this.runs.set(uuid, runs);
    }
    return runs;
  }

  /**
   * Drops the first `count` runs of a GPU (their energy is summed and they have left every
   * reading's thermal memory), keeping when it was last busy in them.
   */
  forget(uuid: string, count: number): void {
    const runs = this.runs.get(uuid);
    if (runs === undefined || count <= 0) return;
    for (const run of runs.splice(0, count)) {
      const busy = run.rhythm.lastBusyAt(run.to);
      if (busy !== null) this.busyBefore.set(uuid, Math.max(busy, this.busyBefore.get(uuid) ?? busy));
    }
  }

  /** The last busy instant of the runs dropped from a GPU's timeline, or undefined. */
  lastBusyBefore(uuid: string): number | undefined {
    return this.busyBefore.get(uuid);
  }

  /** The latest run that had started by t, or undefined. */
  runAt(uuid: string, t: number): Run | undefined {
    const runs = this.runs.get(uuid);
    if (runs === undefined) return undefined;
    for (let i = runs.length - 1; i >= 0; i--) {
      const run = runs[i] as Run;
      if (run.of.from <= t) return run;
    }
    return undefined;
  }

  /** Calls `piece` for each stretch of constant load on the GPU between `from` and `to`, in order. */
  walk(uuid: string, from: number, to: number, piece: Piece): void {
    const runs = this.runs.get(uuid) ?? [];
    // The first run that may overlap: runs are in start order and do not overlap on one GPU.
    let i = runs.length;
    while (i > 0 && (runs[i - 1] as Run).to > from) i--;
    let t = from;
    for (; i < runs.length && t < to; i++) {
      const run = runs[i] as Run;
      if (run.of.from >= to) break;
      if (run.of.from > t) {
        piece(t, run.of.from, NO_CONTEXT, undefined);
        t = run.of.from;
      }
      const end = Math.min(run.to, to);
      walkRun(run, t, end, piece);
      t = Math.max(t, end);
    }
    if (t < to) piece(t, to, NO_CONTEXT, undefined);
  }

  private start(workload: WorkloadRef, pods: readonly PodPlacement[]): void {
    let rank = 0;
    for (const pod of pods) {
      const from = this.pulls.startOf(pod.uid)?.startsAtMs;
      const read = this.reads(pod.node);
      for (const gpu of pod.gpus) {
        if (from !== undefined && read) {
          const wait = dataWaitShare(workload);
          const of: RunOf = { workloadUid: workload.uid, type: workload.type, rank, from, ...(wait > 0 ? { dataWait: wait } : {}) };
          const intensity = between(`${workload.uid}/power`, 0.8, 1);
          // Its integrals slot from the start: the run keeps one shape when a reading fills it.
          const run = {
            of,
            podUid: pod.uid,
            rhythm: rhythmOf(of),
            intensity,
            to: Number.POSITIVE_INFINITY,
            gpu: gpu.uuid,
            integrals: undefined,
          };
          this.of(gpu.uuid).push(run);
          let runs = this.active.get(workload.uid);
          if (runs === undefined) {
            runs = new Set();
            this.active.set(workload.uid, runs);
          }
          runs.add(run);
        }
        rank++;
      }
    }
  }

  private stop(pods: readonly PodPlacement[], t: number): void {
    for (const pod of pods)
      for (const gpu of pod.gpus) {
        const runs = this.runs.get(gpu.uuid);
        const last = runs?.[runs.length - 1];
        if (runs === undefined || last === undefined || last.podUid !== pod.uid || last.to !== Number.POSITIVE_INFINITY) continue;
        // Stopped before its container started (preempted while its image was pulled): it never ran.
        if (last.of.from >= t) runs.pop();
        else last.to = t;
        const active = this.active.get(last.of.workloadUid);
        active?.delete(last as Run & { readonly gpu: string });
        if (active?.size === 0) this.active.delete(last.of.workloadUid);
      }
  }
}

/** The pieces of one run between `from` and `to` (both within the run). */
export function walkRun(run: Run, from: number, to: number, piece: Piece): void {
  let t = from;
  while (t < to) {
    const change = run.rhythm.nextChange(t);
    if (!(change > t)) throw new Error(`GPU load of ${run.of.workloadUid}: the rhythm does not move on from ${t} ms`);
    const next = Math.min(to, change);
    piece(t, next, run.rhythm.at(t), run);
    t = next;
  }
}
