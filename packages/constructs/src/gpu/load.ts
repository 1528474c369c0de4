/**
 * The load a container puts on one GPU, over time: a rhythm per kind of workload, as a sequence
 * of pieces within which the load is constant. GPU physics (power, temperatures, clocks, energy)
 * integrates these pieces in closed form, so what a GPU reports at an instant depends only on the
 * instant, never on how often it is read. What a reading adds on top (utilisation jitter between
 * seconds) is noise keyed by the second, not part of the load. Every workload draws its own
 * parameters from its UID, so no two jobs or notebooks keep the same time.
 *
 * Shapes follow these sources:
 * - training GPUs read near saturation: DCGM GPU_UTIL on Shanghai AI Lab's Seren cluster has its
 *   median and 75th percentile at 99 %, a quarter of samples at 0 (InternLM/AcmeTrace @6d6ac9c,
 *   `util_gpu_seren.pkl`; Hu et al., NSDI'24); collective communication keeps kernels running (the
 *   utilisation stays up) while tensor work and power fall, at the same moment on every rank
 *   (Patel et al., "Characterizing Power Management Opportunities for LLMs in the Cloud",
 *   ASPLOS'24); a job's GPUs also all wait while a checkpoint is written, which is what swings a
 *   training cluster's power by megawatts (Llama Team, "The Llama 3 Herd of Models", 2024, §3.3.4);
 * - interactive workspaces are mostly idle: Alibaba PAI 2020's instances averaged a median 1.5 %
 *   and a mean 10.5 % GPU utilisation over their lives, a third of them 0 (Weng et al., NSDI'22;
 *   cluster-trace-gpu-v2020, in a third-party re-analysis) — a person opens a session, runs cells
 *   and thinks between them, and is away for longer;
 * - inference follows a diurnal request load.
 * Step lengths, phase fractions, cadences and session lengths are modelling choices within those
 * bounds, said so where they are set.
 */
import type { WorkloadType } from "@gpusynth/blueprint";
import { between, hashOn, hashState, unitHash, unitOfState, within } from "../noise.js";

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
  /** Training: the share of each step its GPUs wait for a CPU-starved data loader (sim's dataWaitShare; absent: none). */
  readonly dataWait?: number;
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

/** One piece of a precomputed schedule: the load from `at` until the next piece's `at`. */
interface Scheduled {
  readonly at: number;
  readonly load: Load;
}

/** The index of the last piece at or before t (pieces sorted by `at`; t not before the first). */
function pieceAt(pieces: readonly Scheduled[], t: number): number {
  let lo = 0;
  let hi = pieces.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((pieces[mid] as Scheduled).at <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** A log-normal draw with the given median and spread (σ of its log), clipped, fixed by a key. */
function logNormal(key: string, i: number, median: number, sigma: number, lo: number, hi: number): number {
  // Box–Muller over two hashed uniforms.
  const u = Math.max(1e-12, unitHash(key, 2 * i));
  const v = unitHash(key, 2 * i + 1);
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return Math.min(hi, Math.max(lo, median * Math.exp(sigma * z)));
}

const SECOND = 1_000;

/** A training job's own draws in [0, 1), the same for all its ranks: `unitHash(\`${uid}/<name>\`)` for each name. */
interface TrainingDraws {
  readonly step: number;
  readonly util: number;
  readonly engine: number;
  readonly tensor: number;
  readonly dram: number;
  readonly memoryBound: number;
  readonly comm: number;
  readonly eval: number;
  readonly cycle: number;
  readonly evalMs: number;
  readonly checkpointMs: number;
  readonly phase: number;
  readonly initMs: number;
  readonly fb: number;
}

/**
 * The last training job's draws: a job's GPUs start their runs one after another, and each made
 * the job's fourteen draws again (hashing the job's UID into every key: a fifth of a simulated
 * platform day with its GPUs' timelines). The UID is hashed once, each name on from it.
 */
let lastTraining: { readonly uid: string; readonly draws: TrainingDraws } | undefined;
function trainingDraws(uid: string): TrainingDraws {
  if (lastTraining?.uid === uid) return lastTraining.draws;
  const prefix = hashOn(hashState(), `${uid}/`);
  const unit = (name: string) => unitOfState(hashOn(prefix, name));
  const draws: TrainingDraws = {
    step: unit("step"),
    util: unit("util"),
    engine: unit("engine"),
    tensor: unit("tensor"),
    dram: unit("dram"),
    memoryBound: unit("memory-bound"),
    comm: unit("comm"),
    eval: unit("eval"),
    cycle: unit("cycle"),
    evalMs: unit("eval-ms"),
    checkpointMs: unit("checkpoint-ms"),
    phase: unit("phase"),
    initMs: unit("init-ms"),
    fb: unit("fb"),
  };
  lastTraining = { uid, draws };
  return draws;
}

/**
 * Training: first the job initialises (loads its model, data and checkpoint: 30 s–3 min with the
 * context held and no kernels), then it repeats a cycle, the same on every rank (the cycle is set
 * on the clock, not on each rank's start, as collectives keep ranks in lock-step):
 * - steps of 20–90 s, each loading data (its first 30 %: memory-bound), computing (to 85 %), and
 *   exchanging gradients (the last 15 %: NCCL kernels keep the utilisation near its level while
 *   tensor work stops and power falls);
 * - once a cycle, an evaluation of 1–3 minutes (forward passes only: less tensor work);
 * - at the cycle's end a checkpoint stall of 20–120 s with the GPUs idle;
 * a cycle lasting 20–60 minutes. All modelling choices within the sources above. Each rank sits a
 * little above or below the job's level (−2 to +0.5 points) and moves ±3 points between seconds.
 */
class TrainingRhythm implements Rhythm {
  /** Whole milliseconds throughout, so an edge computed from a cycle's start is exactly the edge. */
  private readonly step: number;
  /** The GPUs' work in a step; the rest of the step (`wait`, first) they wait for a starved data loader. */
  private readonly work: number;
  private readonly wait: number;
  private readonly steps: number;
  /** The evaluation runs before this step of the cycle. */
  private readonly evalBefore: number;
  private readonly evalMs: number;
  private readonly checkpointMs: number;
  private readonly cycleMs: number;
  private readonly offset: number;
  private readonly steadyFrom: number;
  private readonly fb: number;
  private readonly loads: { readonly loading: Load; readonly computing: Load; readonly exchanging: Load; readonly evaluating: Load };
  readonly period: { readonly from: number; readonly ms: number };

  constructor(private readonly run: RunOf) {
    const draws = trainingDraws(run.workloadUid);
    this.work = Math.round(within(draws.step, 20_000, 90_000));
    const share = run.dataWait ?? 0;
    this.wait = Math.round((this.work * share) / (1 - share));
    this.step = this.work + this.wait;
    const level = Math.min(100, within(draws.util, 96, 100) + between(`${run.workloadUid}/rank-${run.rank}`, -2, 0.5));
    const engine = within(draws.engine, 0.85, 0.98);
    const tensor = within(draws.tensor, 0.3, 0.6);
    const dram = within(draws.dram, 0.3, 0.6);
    const memoryBound = within(draws.memoryBound, 0.3, 0.9);
    const busy = (util: number, tensorShare: number, dramShare: number): Load => ({
      util,
      jitter: 3,
      engineShare: engine,
      tensorShare,
      dram: Math.min(1, (util / 100) * dramShare),
      context: true,
    });
    this.loads = {
      loading: busy(level, tensor * (1 - 0.5 * memoryBound), dram + 0.3 * memoryBound),
      computing: busy(level, tensor * 0.95, dram + 0.03),
      exchanging: busy(level * within(draws.comm, 0.88, 0.98), tensor * 0.1, dram * 0.5),
      evaluating: busy(level * within(draws.eval, 0.75, 0.92), tensor * 0.5, dram),
    };
    this.steps = Math.max(4, Math.round(within(draws.cycle, 1_200_000, 3_600_000) / this.step));
    this.evalBefore = this.steps >> 1;
    this.evalMs = Math.round(within(draws.evalMs, 60_000, 180_000));
    this.checkpointMs = Math.round(within(draws.checkpointMs, 20_000, 120_000));
    this.cycleMs = this.steps * this.step + this.evalMs + this.checkpointMs;
    this.offset = Math.round(within(draws.phase, 0, this.cycleMs));
    this.steadyFrom = run.from + Math.round(within(draws.initMs, 30_000, 180_000));
    this.fb = within(draws.fb, 0.4, 0.95);
    this.period = { from: this.steadyFrom, ms: this.cycleMs };
  }

  /**
   * The piece last found: its load, from `pieceFrom` until `pieceTo` (simulated ms). A walk over
   * the run asks each piece for its end and then for its load: found once for both, the lookups
   * of twelve platform frames took 170 ms instead of 245 (of 3.9 s).
   */
  private pieceFrom = Number.NaN;
  private pieceTo = Number.NaN;
  private pieceLoad: Load = HELD;

  /**
   * Finds the piece t falls in (pieceFrom, pieceTo, pieceLoad). The cycle's start is computed
   * from its index, as every caller computes it; the pieces follow from the cycle's layout (steps,
   * the evaluation before the middle step, the checkpoint at the end), no list kept. Every edge is
   * a whole millisecond, so an instant of whole milliseconds within the piece last found is in
   * that piece exactly; any other instant is placed afresh.
   */
  private piece(t: number): void {
    if (t >= this.pieceFrom && t < this.pieceTo && Number.isInteger(t)) return;
    let k = Math.floor((t + this.offset) / this.cycleMs);
    const startOf = (i: number) => i * this.cycleMs - this.offset;
    if (t >= startOf(k + 1)) k++;
    else if (t < startOf(k)) k--;
    const start = startOf(k);
    const into = t - start;
    const evalAt = this.evalBefore * this.step;
    const stepsEnd = this.steps * this.step + this.evalMs;
    if (into >= stepsEnd) this.found(HELD, start + stepsEnd, start + this.cycleMs);
    else if (into >= evalAt && into < evalAt + this.evalMs) this.found(this.loads.evaluating, start + evalAt, start + evalAt + this.evalMs);
    else this.foundInStep(start, into, evalAt);
  }

  /** The piece of a training step that t falls in (piece(), `into` the cycle, before or after the evaluation). */
  private foundInStep(start: number, into: number, evalAt: number): void {
    const stepInto =
      into < evalAt
        ? Math.floor(into / this.step) * this.step
        : evalAt + this.evalMs + Math.floor((into - evalAt - this.evalMs) / this.step) * this.step;
    const within = into - stepInto;
    const stepStart = start + stepInto;
    const loaded = this.wait + Math.round(0.3 * this.work);
    const computed = this.wait + Math.round(0.85 * this.work);
    // The GPUs idle, their context held, until the loader has the batch ready.
    if (within < this.wait) this.found(WAITING, stepStart, stepStart + this.wait);
    else if (within < loaded) this.found(this.loads.loading, stepStart + this.wait, stepStart + loaded);
    else if (within < computed) this.found(this.loads.computing, stepStart + loaded, stepStart + computed);
    else this.found(this.loads.exchanging, stepStart + computed, stepStart + this.step);
  }

  private found(load: Load, from: number, to: number): void {
    this.pieceLoad = load;
    this.pieceFrom = from;
    this.pieceTo = to;
  }

  at(t: number): Load {
    if (t < this.steadyFrom) return HELD;
    this.piece(t);
    return this.pieceLoad;
  }

  nextChange(t: number): number {
    if (t < this.steadyFrom) return this.steadyFrom;
    this.piece(t);
    const end = this.pieceTo;
    // Rounding can leave an edge a hair at or before t: the one after it, then.
    return end > t ? end : this.nextChange(end + 1e-6);
  }

  /** The latest instant not in a checkpoint stall or the initialisation. */
  lastBusyAt(t: number): number | null {
    if (t < this.steadyFrom) return null;
    this.piece(t);
    const load = this.pieceLoad;
    const end = this.pieceTo;
    // Waiting for data: busy until the wait began, at the end of the step before — or, at a cycle's
    // first step, before the checkpoint stall that ended the cycle before.
    if (load === WAITING) {
      const began = end - this.wait;
      const busy = (began + this.offset) % this.cycleMs === 0 ? began - this.checkpointMs : began;
      return busy > this.steadyFrom ? busy : null;
    }
    if (load !== HELD) return t;
    const stalled = end - this.checkpointMs;
    return stalled > this.steadyFrom ? stalled : null;
  }

  framebufferShare(t: number, uuid: string): number {
    return warmingFramebuffer(this.fb, this.run, t, uuid);
  }
}

/** A context held, no kernels running. */
const HELD: Load = { ...NO_CONTEXT, context: true };
/** The same, while a training step waits for its data: its own object, so a wait is told from a checkpoint stall. */
const WAITING: Load = { ...HELD };

/**
 * Interactive: a person works in sessions and is away between them (sessions log-normal around
 * 20 minutes, 2 minutes to 3 hours; away around 40 minutes, 5 minutes to 8 hours); in a session
 * they run cells (around 20 s, 1 s to 20 minutes, each at its own utilisation, 10–90 %) and think
 * between them (around 60 s, 5 s to 15 minutes). About 8 % of the time busy, a mean near 4 %:
 * within PAI's per-instance median 1.5 % and mean 10.5 %. Modelling choices within that source.
 * The schedule is drawn in order from the workload's UID, as far as it is asked for.
 */
class NotebookRhythm implements Rhythm {
  private readonly fb: number;
  private readonly pieces: Scheduled[] = [];
  /** Draws made so far, and where the schedule has been drawn up to. */
  private draws = 0;
  private drawnTo: number;
  private inSession = true;
  private sessionEnds = 0;

  constructor(private readonly run: RunOf) {
    this.fb = between(`${run.workloadUid}/fb`, 0.05, 0.6);
    this.drawnTo = run.from;
    this.sessionEnds = run.from + this.draw(20 * 60_000, 0.8, 2 * 60_000, 3 * 3_600_000);
  }

  private draw(median: number, sigma: number, lo: number, hi: number): number {
    return logNormal(`${this.run.workloadUid}/session`, this.draws++, median, sigma, lo, hi);
  }

  /** Draws the schedule on until it covers t. */
  private cover(t: number): void {
    while (this.drawnTo <= t) {
      if (!this.inSession) {
        // Back from being away: a new session.
        this.pieces.push({ at: this.drawnTo, load: HELD });
        this.drawnTo += this.draw(40 * 60_000, 1, 5 * 60_000, 8 * 3_600_000);
        this.sessionEnds = this.drawnTo + this.draw(20 * 60_000, 0.8, 2 * 60_000, 3 * 3_600_000);
        this.inSession = true;
        continue;
      }
      const util = 10 + 80 * unitHash(`${this.run.workloadUid}/cell`, this.draws);
      const cell = this.draw(20 * SECOND, 1.2, SECOND, 20 * 60_000);
      const think = this.draw(60 * SECOND, 1, 5 * SECOND, 15 * 60_000);
      this.pieces.push(
        { at: this.drawnTo, load: { util, jitter: 8, engineShare: 0.9, tensorShare: 0.2, dram: (util / 100) * 0.3, context: true } },
        { at: this.drawnTo + cell, load: HELD },
      );
      this.drawnTo += cell + think;
      if (this.drawnTo >= this.sessionEnds) this.inSession = false;
    }
  }

  at(t: number): Load {
    if (t < this.run.from) return HELD;
    this.cover(t);
    return (this.pieces[pieceAt(this.pieces, t)] as Scheduled).load;
  }

  nextChange(t: number): number {
    if (t < this.run.from) return this.run.from;
    this.cover(t);
    const i = pieceAt(this.pieces, t);
    while (this.pieces.length <= i + 1) this.cover(this.drawnTo);
    return (this.pieces[i + 1] as Scheduled).at;
  }

  /** The end of the latest cell (or t, during one). */
  lastBusyAt(t: number): number | null {
    if (t < this.run.from) return null;
    this.cover(t);
    for (let i = pieceAt(this.pieces, t); i >= 0; i--) {
      const piece = this.pieces[i] as Scheduled;
      if (piece.load.util > 0) return i === pieceAt(this.pieces, t) ? t : (this.pieces[i + 1] as Scheduled).at;
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
