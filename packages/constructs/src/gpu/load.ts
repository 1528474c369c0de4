/**
 * The load a container puts on one GPU, over time: a rhythm per kind of workload, as a sequence
 * of pieces within which the load is constant. GPU physics (power, temperatures, clocks, energy)
 * integrates these pieces in closed form, so what a GPU reports at an instant depends only on the
 * instant, never on how often it is read. What a reading adds on top (utilisation jitter between
 * scrapes) is noise keyed by the second, not part of the load.
 *
 * Shapes follow these sources:
 * - training sits near saturation (run-ai/fake-gpu-operator v0.2.0 draws train pods from
 *   80–100 %), with communication dips synchronised across all GPUs of the job (Patel et al.,
 *   "Characterizing Power Management Opportunities for LLMs in the Cloud", ASPLOS'24);
 * - interactive workspaces are mostly idle with short bursts (allocated-but-idle is the fleet
 *   norm: Alibaba PAI 2020 trace, NSDI'22, median per-instance utilisation 1.5 % in a
 *   third-party re-analysis);
 * - inference follows a diurnal request load.
 * Numbers that no source pins (step lengths, dip depth, fractions) are modelling choices, said so
 * where they are set.
 */
import type { WorkloadType } from "@gpusynth/blueprint";
import { between, unitHash } from "../noise.js";

/** What one GPU is asked to do while a piece lasts. */
export interface Load {
  /** Utilisation level, 0–100, before the scrape-to-scrape jitter a reading adds. */
  readonly util: number;
  /** ± points of utilisation jitter between seconds around `util`. */
  readonly jitter: number;
  /** Fractions of the busy time: graphics engine and tensor pipes active. */
  readonly engineShare: number;
  readonly tensorShare: number;
  /** DRAM bandwidth in use, 0–1 of the peak. */
  readonly dram: number;
  /** A process holds a CUDA context (the SM clock stays up and the board draws more, even without kernels). */
  readonly context: boolean;
}

/** No process on the GPU: the driver alone (persistence mode). */
export const NO_CONTEXT: Load = { util: 0, jitter: 0, engineShare: 0, tensorShare: 0, dram: 0, context: false };

/** The load of one container on one GPU over its run: piecewise constant. */
export interface Rhythm {
  /** The load at simulated ms t (t within the run). */
  at(t: number): Load;
  /** When the load next changes after t (> t); Infinity when it never does. */
  nextChange(t: number): number;
  /**
   * From `from` on, the pieces repeat every `ms`: integrals over whole periods are taken once.
   * Undefined for rhythms that do not repeat.
   */
  readonly period?: { readonly from: number; readonly ms: number };
  /** The last time at or before t (not before `from`) the load was not idle, or null. */
  lastBusyAt(t: number): number | null;
  /** The framebuffer share (0–1 of what is available) at t, for the GPU of this rank. */
  framebufferShare(t: number, uuid: string): number;
}

/** A number in [-1, 1) fixed for a key and a time bucket: scrape-to-scrape noise. */
export function noise(key: string, bucket: number): number {
  return unitHash(key, bucket) * 2 - 1;
}

const MINUTE = 60_000;
const FIVE_MINUTES = 300_000;

/** What a rhythm needs of its container: the workload (identity and kind), the GPU's rank, the start. */
export interface RunOf {
  readonly workloadUid: string;
  readonly type: WorkloadType;
  /** The GPU's position among the workload's GPUs (rank 0 first). */
  readonly rank: number;
  /** When the container started (after its image was pulled), simulated ms. */
  readonly from: number;
}

export function rhythmOf(run: RunOf): Rhythm {
  switch (run.type) {
    case "training":
    case "distributed-training":
      return new TrainingRhythm(run);
    case "interactive":
      return new NotebookRhythm(run);
    case "inference":
      return new InferenceRhythm(run);
  }
}

/**
 * A job's framebuffer share at time t: the caching allocator grows toward its peak over the
 * first minutes of a run (time constant 2 minutes, a modelling choice), rank 0 holds 2–8 % more
 * (it keeps the extra buffers of logging and checkpoints), and every step moves it by about 1 %.
 */
function warmingFramebuffer(target: number, run: RunOf, t: number, uuid: string): number {
  const ranFor = Math.max(0, t - run.from);
  const warm = 1 - 0.6 * Math.exp(-ranFor / 120_000);
  const rankExtra = run.rank === 0 ? between(`${run.workloadUid}/fb-rank0`, 0.02, 0.08) : 0;
  return Math.min(0.99, Math.max(0, target * warm * (1 + rankExtra + 0.01 * noise(uuid, Math.floor(t / 15_000) + 11))));
}

/**
 * Training: after a minute of start-up at a fifth of its level, steps of 20–90 s (a modelling
 * choice) whose first 30 % loads data (memory-bound: fewer tensor instructions, more DRAM
 * traffic), then computes, and whose last 15 % is a communication dip to 60 %, at the same
 * moment on every rank (collectives synchronise them). Each rank sits a little above or below
 * the job's level (−4 to +3 points) and moves ±4 points between seconds, so busy ranks often
 * read 100.
 */
class TrainingRhythm implements Rhythm {
  private readonly step: number;
  private readonly offset: number;
  private readonly level: number;
  private readonly engine: number;
  private readonly tensor: number;
  private readonly dram: number;
  private readonly memoryBound: number;
  private readonly fb: number;
  private readonly rampEnd: number;
  readonly period: { readonly from: number; readonly ms: number };

  constructor(private readonly run: RunOf) {
    const id = run.workloadUid;
    this.step = between(`${id}/step`, 20_000, 90_000);
    this.offset = between(`${id}/phase`, 0, this.step);
    this.level = between(`${id}/util`, 82, 100) + between(`${id}/rank-${run.rank}`, -4, 3);
    this.engine = between(`${id}/engine`, 0.85, 0.98);
    this.tensor = between(`${id}/tensor`, 0.3, 0.6);
    this.dram = between(`${id}/dram`, 0.3, 0.6);
    this.memoryBound = between(`${id}/memory-bound`, 0.3, 0.9);
    this.fb = between(`${id}/fb`, 0.4, 0.95);
    this.rampEnd = run.from + 60_000;
    this.period = { from: this.rampEnd, ms: this.step };
  }

  /**
   * The step t falls in: its edges, computed from its index as every caller computes them, so a
   * piece that starts at an edge is in the phase after it (rounding cannot leave it a hair before).
   */
  private edges(t: number): readonly [number, number, number] {
    let k = Math.floor((t + this.offset) / this.step);
    const edge = (x: number) => (k + x) * this.step - this.offset;
    if (t >= edge(1)) k++;
    else if (t < edge(0)) k--;
    return [edge(0.3), edge(0.85), edge(1)];
  }

  at(t: number): Load {
    const [loaded, computed] = this.edges(t);
    const level = t < this.rampEnd ? this.level * 0.2 : t >= computed ? this.level * 0.6 : this.level;
    const util = Math.min(100, level);
    const bound = t < loaded ? this.memoryBound : 0.1;
    return {
      util,
      jitter: 4,
      engineShare: this.engine,
      tensorShare: this.tensor * (1 - 0.5 * bound),
      dram: Math.min(1, (util / 100) * (this.dram + 0.3 * bound)),
      context: true,
    };
  }

  nextChange(t: number): number {
    const next = this.edges(t).find((edge) => edge > t) as number;
    return t < this.rampEnd ? Math.min(next, this.rampEnd) : next;
  }

  /** Training never idles while its container runs. */
  lastBusyAt(t: number): number {
    return t;
  }

  framebufferShare(t: number, uuid: string): number {
    return warmingFramebuffer(this.fb, this.run, t, uuid);
  }
}

/** Interactive: mostly idle; in one five-minute window out of five the user runs something (a modelling choice). */
class NotebookRhythm implements Rhythm {
  private readonly fb: number;
  constructor(private readonly run: RunOf) {
    this.fb = between(`${run.workloadUid}/fb`, 0.05, 0.6);
  }

  at(t: number): Load {
    const id = this.run.workloadUid;
    const bucket = Math.floor(t / FIVE_MINUTES);
    const active = unitHash(`${id}/burst`, bucket) < 0.2;
    const util = active ? between(`${id}/burst-util`, 10, 70, bucket) : 0;
    return { util, jitter: active ? 8 : 0, engineShare: 0.9, tensorShare: 0.2, dram: (util / 100) * 0.3, context: true };
  }

  nextChange(t: number): number {
    return (Math.floor(t / FIVE_MINUTES) + 1) * FIVE_MINUTES;
  }

  /** The end of the latest burst (or t, within one), looking back a week at most. */
  lastBusyAt(t: number): number | null {
    const first = Math.max(Math.floor(this.run.from / FIVE_MINUTES), Math.floor(t / FIVE_MINUTES) - 2016);
    for (let bucket = Math.floor(t / FIVE_MINUTES); bucket >= first; bucket--) {
      const at = Math.min(t, (bucket + 1) * FIVE_MINUTES);
      if (this.at(Math.max(this.run.from, bucket * FIVE_MINUTES)).util > 0) return at;
    }
    return null;
  }

  framebufferShare(t: number, uuid: string): number {
    return warmingFramebuffer(this.fb, this.run, t, uuid);
  }
}

/**
 * Inference: the request load follows the day (peak mid-afternoon UTC) with five-minute jitter,
 * set minute by minute; each replica serves its own share and moves ±10 % between seconds.
 */
class InferenceRhythm implements Rhythm {
  private readonly share: number;
  private readonly fb: number;
  constructor(private readonly run: RunOf) {
    this.share = between(`${run.workloadUid}/util`, 0.3, 0.9);
    this.fb = between(`${run.workloadUid}/fb`, 0.3, 0.9);
  }

  at(t: number): Load {
    const minute = Math.floor(t / MINUTE) * MINUTE;
    const hour = (minute / 3_600_000) % 24;
    const load =
      0.5 +
      0.35 * Math.cos((2 * Math.PI * (hour - 15)) / 24) +
      0.15 * (unitHash(`${this.run.workloadUid}/load`, Math.floor(minute / FIVE_MINUTES)) - 0.5);
    const util = Math.max(0, Math.min(100, 100 * load * this.share));
    return { util, jitter: 0.1 * util, engineShare: 0.9, tensorShare: 0.15, dram: Math.min(1, (util / 100) * 1.2), context: true };
  }

  nextChange(t: number): number {
    return (Math.floor(t / MINUTE) + 1) * MINUTE;
  }

  /** A served model always has some requests (the load never falls below 7.5 % of its peak). */
  lastBusyAt(t: number): number {
    return t;
  }

  /** Model weights and the KV cache are allocated at start: no warm-up growth. */
  framebufferShare(t: number, uuid: string): number {
    return Math.min(0.99, this.fb * (1 + 0.01 * noise(uuid, Math.floor(t / 15_000) + 11)));
  }
}
