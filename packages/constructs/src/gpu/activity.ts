/**
 * What a GPU is doing, as DCGM would read it: utilisation, power, temperatures, clocks,
 * framebuffer and energy, all consistent with each other and with the container running on it.
 * Every value is a pure function of the GPU and the simulated time: the containers' runs
 * (timeline.ts) give the load at every instant, the board's physics (board.ts, measured on a real
 * H200) what that load draws and how hot it runs, and a reading integrates them in closed form:
 * - power is NVML's one-second average of the true power (the capture's reading ramps over 1 s);
 * - temperatures are the board's thermal modes driven by the true power over the last minutes;
 * - the energy counter is the integral of the true power since the driver loaded, so its rate
 *   equals the power readings;
 * so a scrape every 15 s, one every 60 s and a calibration sample agree exactly at any instant.
 * No two GPUs read alike: each board has its own idle draw (−4 % to +8 %), efficiency (±5 %),
 * temperature offset (−3 to +4 °C, airflow position) and idle PCIe chatter, and has been up 1 to
 * 60 days when the simulation starts (modelling choices: the spread of a fleet's idle readings in
 * public nvidia-smi captures is a few watts and a few °C). One model instance serves every
 * construct that reports GPU activity (dcgm-exporter, the Run:ai exporters, the control plane).
 */
import type { GpuModel } from "@gpusynth/blueprint";
import type { DeepReadonly, Gpu, PowerCap } from "@gpusynth/sim";
import { between } from "../noise.js";
import { Board, type BoardTraits, DIE_MODES, MEMORY_MODES, THERMAL_MEMORY_MS, type ThermalMode } from "./board.js";
import { type Load, noise } from "./load.js";
import { type GpuTimelines, type Piece, type Run, type Wait, walkRun } from "./timeline.js";

/** A reading's utilisation and framebuffer in use (GpuActivityModel.readWork). */
export type GpuWork = Pick<GpuReading, "gpuUtil" | "fbUsedMiB">;

export interface GpuReading {
  readonly gpuUtil: number;
  readonly memCopyUtil: number;
  readonly grEngineActive: number;
  readonly tensorActive: number;
  readonly dramActive: number;
  readonly powerW: number;
  readonly gpuTempC: number;
  readonly memoryTempC: number;
  readonly smClockMHz: number;
  readonly memClockMHz: number;
  readonly fbUsedMiB: number;
  readonly fbFreeMiB: number;
  readonly fbReservedMiB: number;
  readonly energyMj: number;
  /**
   * Time (ns) the software power cap has held the SM clock down since the driver loaded: NVML's
   * power violation counter (dcgm-exporter's DCGM_FI_DEV_POWER_VIOLATION, `nvidia-smi -q`'s
   * "SW Power Capping" clocks-event counter).
   */
  readonly powerViolationNs: number;
  readonly pcieTxBytesPerSecond: number;
  readonly pcieRxBytesPerSecond: number;
}

/**
 * What a reading needs of a GPU: which one, when its driver last initialised (its energy
 * counter's start), and when its enforced power limit was lowered (faults.powerCaps), if ever.
 */
export type GpuIdentity = Pick<DeepReadonly<Gpu>, "uuid" | "initialisedAt"> & { readonly powerCaps?: readonly PowerCap[] };

/** A stretch of constant load under one power limit (undefined: the board's own). */
type LimitedPiece = (from: number, to: number, load: Load, run: Run | undefined, limitW: number | undefined) => void;

const NO_CAPS: readonly PowerCap[] = [];

/**
 * A step's load while the GPU waits part of it on a slower rank: NCCL's kernels spin at the
 * collective, so the engine stays busy (utilisation as before) while the tensor cores and DRAM
 * idle for that share of the time.
 */
function waiting(load: Load, share: number): Load {
  if (share <= 0 || !load.context) return load;
  return { ...load, tensorShare: load.tensorShare * (1 - share), dram: load.dram * (1 - share) };
}

/** A stretch of time something holds over: a power cap, a wait on a slower rank. */
interface Window {
  readonly from: number;
  readonly to: number;
}

/** The window holding `t`, if one does. */
function holding<W extends Window>(windows: readonly W[], t: number): W | undefined {
  for (const window of windows) if (window.from <= t && t < window.to) return window;
  return undefined;
}

/** Where, after `t` and before `to`, a window starts or the one holding `t` ends. */
function nextBoundary(windows: readonly Window[], t: number, to: number): number {
  let next = to;
  for (const window of windows) {
    if (window.from <= t && t < window.to) next = Math.min(next, window.to);
    else if (window.from > t) next = Math.min(next, window.from);
  }
  return next;
}

/**
 * `piece` for each stretch of constant load, cut where a power cap starts or ends and where the
 * run starts or stops waiting on a slower rank, with the load it then draws.
 */
function cutAtChanges(caps: readonly PowerCap[], piece: LimitedPiece): Piece {
  return (from, to, load, run) => {
    const waits = run?.waits ?? NO_WAITS;
    if (caps.length === 0 && waits.length === 0) {
      piece(from, to, load, run, undefined);
      return;
    }
    for (let t = from; t < to; ) {
      const next = Math.min(nextBoundary(caps, t, to), nextBoundary(waits, t, to));
      piece(t, next, waiting(load, holding(waits, t)?.share ?? 0), run, holding(caps, t)?.watts);
      t = next;
    }
  };
}

const NO_WAITS: readonly Wait[] = [];

/** Whether a cap holds somewhere in [from, to). */
const capped = (caps: readonly PowerCap[], from: number, to: number) => caps.some((cap) => cap.from < to && cap.to > from);

const SECOND = 1_000;
const DAY = 86_400_000;
/** Every thermal mode, and whether it is the die's (else the memory's). */
const MODES: readonly (readonly [ThermalMode, boolean])[] = [
  ...DIE_MODES.map((m) => [m, true] as const),
  ...MEMORY_MODES.map((m) => [m, false] as const),
];

/**
 * What a thermal walk works out for each piece, kept for the few it meets again: each mode's
 * target under a load (at a run's intensity and any power limit) and each mode's decay over a
 * piece's duration. The last minutes of a training GPU are a step's three loads and durations
 * over and over; a piece met again is looked up among the last four of each instead of worked out
 * again (four exponentials a piece), with the same arithmetic, so the same digits.
 */
class ThermalMemo {
  private static readonly SLOTS = 4;
  private board: Board | undefined;
  private readonly loads: Array<Load | undefined> = new Array(ThermalMemo.SLOTS).fill(undefined);
  private readonly intensities = new Float64Array(ThermalMemo.SLOTS);
  private readonly limits: Array<number | undefined> = new Array(ThermalMemo.SLOTS).fill(undefined);
  private loadSlots = 0;
  /** Per load slot, each mode's target (MODES' order). */
  readonly targets = new Float64Array(ThermalMemo.SLOTS * MODES.length);
  private readonly durations = new Float64Array(ThermalMemo.SLOTS).fill(Number.NaN);
  private durationSlots = 0;
  /** Per duration slot, each mode's decay over it. */
  readonly decays = new Float64Array(ThermalMemo.SLOTS * MODES.length);

  /**
   * Each mode's temperature above the baseline where the walk has got to (NaN: no piece yet). One
   * for every walk, as the walk is synchronous: a GPU read made an array (and a closure over it)
   * each, 4,096 a platform frame.
   */
  readonly modeTemps = new Float64Array(MODES.length);

  /** Starts a walk over `board`'s pieces (the targets are the board's own). */
  start(board: Board): void {
    this.board = board;
    this.loads.fill(undefined);
    this.loadSlots = 0;
    this.modeTemps.fill(Number.NaN);
  }

  /** Each mode's temperature carried through a piece: towards its target under the piece's load. */
  readonly piece: LimitedPiece = (from, to, load, run, limitW) => {
    const targets = this.targetsOf(load, run?.intensity ?? 1, limitW);
    const decays = this.decaysOver(to - from);
    const y = this.modeTemps;
    for (let i = 0; i < MODES.length; i++) {
      const target = this.targets[targets + i] as number;
      const before = Number.isNaN(y[i] as number) ? target : (y[i] as number);
      y[i] = target + (before - target) * (this.decays[decays + i] as number);
    }
  };

  /** Where the modes' targets under the load start in `targets`. */
  targetsOf(load: Load, intensity: number, limitW: number | undefined): number {
    const count = Math.min(this.loadSlots, ThermalMemo.SLOTS);
    for (let k = 0; k < count; k++)
      if (this.loads[k] === load && this.intensities[k] === intensity && this.limits[k] === limitW) return k * MODES.length;
    const k = this.loadSlots++ % ThermalMemo.SLOTS;
    this.loads[k] = load;
    this.intensities[k] = intensity;
    this.limits[k] = limitW;
    const board = this.board as Board;
    const watts = board.draw(load, intensity, limitW).watts;
    for (let i = 0; i < MODES.length; i++) {
      const [mode, die] = MODES[i] as (typeof MODES)[number];
      this.targets[k * MODES.length + i] = board.modeTarget(mode, watts, load, die);
    }
    return k * MODES.length;
  }

  /** Where the modes' decays over `ms` start in `decays` (they depend on the duration alone: kept across walks). */
  decaysOver(ms: number): number {
    for (let k = 0; k < ThermalMemo.SLOTS; k++) if (this.durations[k] === ms) return k * MODES.length;
    const k = this.durationSlots++ % ThermalMemo.SLOTS;
    this.durations[k] = ms;
    for (let i = 0; i < MODES.length; i++)
      this.decays[k * MODES.length + i] = Math.exp(-ms / (MODES[i] as (typeof MODES)[number])[0].tauMs);
    return k * MODES.length;
  }
}
const THERMAL_MEMO = new ThermalMemo();

/** What is integrated over a GPU's runs: energy (J), and the time (ms) the power cap held the clock. */
interface Sums {
  joules: number;
  cappedMs: number;
}

/** Where an integral over a GPU's runs has got to: every run before `next` is summed into `sums`. */
interface Cursor {
  next: number;
  /** ∫ from simulated time 0 to `at`, the end of the last summed run (or 0). */
  readonly sums: Sums;
  at: number;
}

/**
 * What one GPU's physics has summed of one of its runs, kept on the run (Run.integrals): a run lives
 * on one GPU's timeline, and is forgotten with it. Made for a physics (a GPU's board), so a board
 * made anew (another model) sums the run afresh. A platform run kept these in two WeakMaps per GPU:
 * 8,192 tables (ephemerons, which a full garbage collection marks apart), and two lookups in them
 * per GPU at each reading; a platform frame took 56.6 and 53.3 ms with the slot against 64.7 and
 * 62.1 with the maps (in turns, 2026-12-08).
 */
interface RunIntegrals {
  readonly physics: GpuPhysics;
  /** A repeating run's integrals before its rhythm repeats, and over one period of it. */
  periodic?: { readonly before: Sums; readonly perPeriod: Sums };
  /** The run's integrals summed piece by piece from `from` (its start, or its current period's) up to `at`. */
  summed?: { readonly from: number; at: number; readonly sums: Sums };
}

/** What `physics` has summed of `run`, made the first time. */
function integralsOf(run: Run, physics: GpuPhysics): RunIntegrals {
  const kept = run.integrals as RunIntegrals | undefined;
  if (kept !== undefined && kept.physics === physics) return kept;
  const made: RunIntegrals = { physics };
  run.integrals = made;
  return made;
}

/** One GPU's board, its fixed traits and what its integrals have summed so far. */
interface GpuPhysics {
  readonly board: Board;
  readonly idlePcie: number;
  /** Energy (J) its driver had counted when the simulation started. */
  readonly beforeJ: number;
  readonly cursor: Cursor;
  /** The integrals from 0 to the driver's last (re)initialisation, once per initialisation. */
  initialised?: { readonly at: number; readonly sums: Sums };
  last?: { readonly t: number; readonly initialisedAt: number; readonly reading: GpuReading };
  /** Its work at the last instant asked (workAt): Run:ai's exporter asks before dcgm-exporter reads. */
  work?: Work;
}

/** A GPU's work at an instant: the run on it, its load, its utilisation (unrounded) and framebuffer in use. */
interface Work {
  readonly t: number;
  readonly running: Run | undefined;
  readonly load: Load | undefined;
  readonly util: number;
  readonly fbUsedMiB: number;
}

function traitsOf(uuid: string): BoardTraits {
  return {
    idlePowerFactor: between(`${uuid}/idle-power`, 0.96, 1.08),
    efficiency: between(`${uuid}/efficiency`, 0.95, 1.05),
    tempOffsetC: between(`${uuid}/temp`, -3, 4),
  };
}

export class GpuActivityModel {
  private readonly gpus = new Map<string, GpuPhysics>();

  /** `traits`: what sets each board apart (by default hashed from its UUID; a replay of a capture sets one). */
  constructor(
    readonly timelines: GpuTimelines,
    private readonly traits: (uuid: string) => BoardTraits = traitsOf,
  ) {}

  private physicsOf(uuid: string, model: GpuModel): GpuPhysics {
    let physics = this.gpus.get(uuid);
    if (physics === undefined || physics.board.model !== model) {
      const board = new Board(model, this.traits(uuid));
      const uptimeMs = between(`${uuid}/uptime`, DAY, 60 * DAY);
      physics = {
        board,
        idlePcie: between(`${uuid}/pcie-idle`, 2e4, 2.5e5),
        beforeJ: board.idleW * (uptimeMs / SECOND),
        cursor: { next: 0, sums: { joules: 0, cappedMs: 0 }, at: 0 },
      };
      this.gpus.set(uuid, physics);
    }
    return physics;
  }

  /** Reads a GPU at simulated time t (ms). */
  read(gpu: GpuIdentity, model: GpuModel, t: number): GpuReading {
    const physics = this.physicsOf(gpu.uuid, model);
    const last = physics.last;
    if (last !== undefined && last.t === t && last.initialisedAt === gpu.initialisedAt) return last.reading;
    const { board } = physics;
    const { running, load, util, fbUsedMiB } = this.workAt(gpu, model, t, physics);
    const second = Math.floor(t / SECOND);
    const caps = gpu.powerCaps ?? NO_CAPS;
    const draw = load === undefined ? undefined : board.draw(load, running?.intensity ?? 1, holding(caps, t)?.watts);

    // NVML's power reading: the true power averaged over the last second.
    let windowJ = 0;
    this.timelines.walk(
      gpu.uuid,
      t - SECOND,
      t,
      cutAtChanges(caps, (from, to, l, r, limitW) => {
        windowJ += board.draw(l, r?.intensity ?? 1, limitW).watts * ((to - from) / SECOND);
      }),
    );
    const dynamic = Math.max(0, windowJ - board.contextW);
    const powerW = windowJ * (1 + 0.004 * noise(gpu.uuid, second)) + 0.01 * dynamic * noise(gpu.uuid, second + 1);

    const { die, memory } = this.temperatures(gpu.uuid, caps, board, t);
    // A slow ambient swing through the day (data-hall air: ±1.5 °C, a modelling choice).
    const ambient = 1.5 * Math.sin((2 * Math.PI * ((t / 3_600_000) % 24)) / 24);

    const busy = util / 100;
    const smClockMHz =
      draw === undefined
        ? model.smClockIdleMHz
        : draw.capped
          ? Math.round(draw.smClockMHz * (1 + 0.02 * noise(gpu.uuid, second + 9)))
          : draw.smClockMHz;
    const available = model.framebufferMiB - model.framebufferReservedMiB;
    const pcie = running === undefined ? 0 : between(`${running.of.workloadUid}/pcie`, 2e7, 6e8) * (1 + 0.2 * noise(gpu.uuid, second + 7));
    const idlePcie = physics.idlePcie * (1 + 0.3 * noise(gpu.uuid, second + 13));
    const { joules: energyJ, cappedMs } = this.sinceDriverLoad(gpu, physics, t);
    const reading: GpuReading = {
      gpuUtil: Math.round(util),
      memCopyUtil: Math.round((load?.dram ?? 0) * 100),
      grEngineActive: round3(busy * (load?.engineShare ?? 0)),
      tensorActive: round3(busy * (load?.tensorShare ?? 0)),
      dramActive: round3(load?.dram ?? 0),
      powerW: Math.round(powerW * 1000) / 1000,
      gpuTempC: Math.round(die + ambient + 0.6 * noise(gpu.uuid, second + 3)),
      memoryTempC: Math.round(memory + ambient + 0.6 * noise(gpu.uuid, second + 5)),
      smClockMHz,
      memClockMHz: model.memoryClockMHz,
      fbUsedMiB,
      fbFreeMiB: available - fbUsedMiB,
      fbReservedMiB: model.framebufferReservedMiB,
      energyMj: Math.floor(energyJ * 1000),
      powerViolationNs: Math.round(cappedMs * 1e6),
      pcieTxBytesPerSecond: Math.round(pcie * busy + idlePcie),
      pcieRxBytesPerSecond: Math.round(pcie * 1.5 * busy + idlePcie * 1.2),
    };
    physics.last = { t, initialisedAt: gpu.initialisedAt, reading };
    return reading;
  }

  /**
   * What a reading says of the GPU's work at t, without its physics (power, clocks, temperatures):
   * its utilisation and framebuffer in use, the same as read()'s. For a reader that needs no more
   * (Run:ai's exporter reads every GPU of the cluster, and the thermal walk was a third of a reading).
   * The energy counter is carried on to t as a reading carries it, so the runs it has summed are
   * forgotten as they would be.
   */
  readWork(gpu: GpuIdentity, model: GpuModel, t: number): GpuWork {
    const physics = this.physicsOf(gpu.uuid, model);
    const last = physics.last;
    if (last !== undefined && last.t === t && last.initialisedAt === gpu.initialisedAt) return last.reading;
    const { util, fbUsedMiB } = this.workAt(gpu, model, t, physics);
    this.sinceDriverLoad(gpu, physics, t);
    return { gpuUtil: Math.round(util), fbUsedMiB };
  }

  /**
   * Sums the GPU's energy counter up to t without reading it, so the runs summed are forgotten as
   * a reading would forget them: for a stretch nobody reads (a live run's warm-up), whose runs a
   * first reading would otherwise find all kept.
   */
  settle(gpu: GpuIdentity, model: GpuModel, t: number): void {
    if (gpu.initialisedAt > t) return; // Its driver loads later: a reading then sums from there.
    this.sinceDriverLoad(gpu, this.physicsOf(gpu.uuid, model), t);
  }

  /** The run on the GPU at t, its load (after any wait on a slower rank), its utilisation (unrounded) and framebuffer in use. */
  private workAt(gpu: GpuIdentity, model: GpuModel, t: number, physics: GpuPhysics): Work {
    // Asked once per reader at the same instant (a GPU's timeline is the same until simulated time moves).
    if (physics.work?.t === t) return physics.work;
    const run = this.timelines.runAt(gpu.uuid, t);
    const running = run !== undefined && t < run.to ? run : undefined;
    const rhythmLoad = running?.rhythm.at(t);
    const load = rhythmLoad === undefined ? undefined : waiting(rhythmLoad, holding(running?.waits ?? NO_WAITS, t)?.share ?? 0);
    const second = Math.floor(t / SECOND);
    const util = load === undefined || load.util === 0 ? 0 : Math.max(1, Math.min(100, load.util + load.jitter * noise(gpu.uuid, second)));
    const available = model.framebufferMiB - model.framebufferReservedMiB;
    const fbUsedMiB = running === undefined ? 0 : Math.min(available, Math.round(available * running.rhythm.framebufferShare(t, gpu.uuid)));
    physics.work = { t, running, load, util, fbUsedMiB };
    return physics.work;
  }

  /** The last simulated time at or before t the GPU was busy (Run:ai's "last GPU utilization time"), or null. */
  lastBusyAt(gpu: GpuIdentity, t: number): number | null {
    const runs = this.timelines.of(gpu.uuid);
    for (let i = runs.length - 1; i >= 0; i--) {
      const run = runs[i] as Run;
      if (run.of.from > t) continue;
      const busy = run.rhythm.lastBusyAt(Math.min(t, run.to));
      if (busy !== null) return busy;
    }
    return this.timelines.lastBusyBefore(gpu.uuid) ?? null;
  }

  /** The die's and memory's temperatures at t: each thermal mode driven by the true power over the last minutes. */
  private temperatures(uuid: string, caps: readonly PowerCap[], board: Board, t: number): { die: number; memory: number } {
    const memo = THERMAL_MEMO;
    memo.start(board);
    this.timelines.walk(uuid, t - THERMAL_MEMORY_MS, t, cutAtChanges(caps, memo.piece));
    const y = memo.modeTemps;
    let die = board.baseline(true);
    let memory = board.baseline(false);
    for (let i = 0; i < MODES.length; i++) {
      if ((MODES[i] as (typeof MODES)[number])[1]) die += y[i] as number;
      else memory += y[i] as number;
    }
    return { die, memory };
  }

  /**
   * The driver's counters at t: energy (J), what it counted before the simulation (an idle history)
   * or since its last initialisation, and the time the power cap held the clock (ms), the same way.
   */
  private sinceDriverLoad(gpu: GpuIdentity, physics: GpuPhysics, t: number): Sums {
    // A (re)initialisation comes after every earlier read (the driver was down between), so the
    // integral up to it is taken with the same cursor before the integral up to t.
    if (gpu.initialisedAt !== 0 && physics.initialised?.at !== gpu.initialisedAt) {
      if (physics.cursor.at > gpu.initialisedAt)
        throw new Error(`GPU ${gpu.uuid}: its energy was summed past its initialisation at ${gpu.initialisedAt} ms`);
      physics.initialised = { at: gpu.initialisedAt, sums: this.integral(gpu, physics, physics.cursor, gpu.initialisedAt) };
    }
    const now = this.integral(gpu, physics, physics.cursor, t);
    this.forgetSummed(gpu.uuid, physics, t);
    if (gpu.initialisedAt === 0) return { joules: physics.beforeJ + now.joules, cappedMs: now.cappedMs };
    const at = physics.initialised?.sums ?? { joules: 0, cappedMs: 0 };
    return { joules: now.joules - at.joules, cappedMs: now.cappedMs - at.cappedMs };
  }

  /** Drops the runs summed into the cursor that ended before every thermal mode's memory of t. */
  private forgetSummed(uuid: string, physics: GpuPhysics, t: number): void {
    const runs = this.timelines.of(uuid);
    let done = 0;
    while (done < physics.cursor.next && (runs[done] as Run).to < t - THERMAL_MEMORY_MS) done++;
    if (done === 0) return;
    this.timelines.forget(uuid, done);
    physics.cursor.next -= done;
  }

  /**
   * ∫ true power (J), and the time under the power cap, from simulated time 0 to t. Finished runs
   * are summed into the cursor in the order they ran, so the sums are the same whichever instants
   * they were asked for.
   */
  private integral(gpu: GpuIdentity, physics: GpuPhysics, cursor: Cursor, t: number): Sums {
    const runs = this.timelines.of(gpu.uuid);
    const caps = gpu.powerCaps ?? NO_CAPS;
    const { board } = physics;
    const { sums } = cursor;
    while (cursor.next < runs.length) {
      const run = runs[cursor.next] as Run;
      if (run.to > t) break;
      const during = this.runSums(physics, caps, run, run.to);
      sums.joules += board.idleW * ((run.of.from - cursor.at) / SECOND) + during.joules;
      sums.cappedMs += during.cappedMs;
      cursor.at = run.to;
      cursor.next++;
    }
    const run = runs[cursor.next];
    if (run === undefined || run.of.from >= t)
      return { joules: sums.joules + board.idleW * ((t - cursor.at) / SECOND), cappedMs: sums.cappedMs };
    const during = this.runSums(physics, caps, run, t);
    return {
      joules: sums.joules + board.idleW * ((run.of.from - cursor.at) / SECOND) + during.joules,
      cappedMs: sums.cappedMs + during.cappedMs,
    };
  }

  /**
   * A run's integrals from its start to `to`. Whole periods of a repeating rhythm are counted, not
   * walked; the pieces after them (of the period `to` falls in), or of a rhythm that does not repeat
   * from its start, are summed piece by piece and the sums so far are kept, so each piece is added
   * once and in the same order whenever it is asked for: a reader every 15 s walks the pieces of the
   * last 15 s, not the whole period again (which was most of a GPU's reading).
   */
  private runSums(physics: GpuPhysics, caps: readonly PowerCap[], run: Run, to: number): Sums {
    const from = run.of.from;
    // A run under a lowered limit or waiting on a slower rank somewhere is walked whole: its
    // periods and its sums so far differ from a plain run's (both are rare, and short next to a month).
    if (capped(caps, from, to) || (run.waits?.length ?? 0) > 0) return this.walked(physics, caps, run, from, to);
    const period = run.rhythm.period;
    if (period === undefined) return this.summedOnward(physics, caps, run, from, to);
    if (to <= period.from) return this.walked(physics, caps, run, from, to);
    const whole = Math.floor((to - period.from) / period.ms);
    const integrals = integralsOf(run, physics);
    let periodic = integrals.periodic;
    if (periodic === undefined) {
      periodic = {
        before: this.walked(physics, caps, run, from, period.from),
        perPeriod: this.walked(physics, caps, run, period.from, period.from + period.ms),
      };
      integrals.periodic = periodic;
    }
    const { before, perPeriod } = periodic;
    const after = this.summedOnward(physics, caps, run, period.from + whole * period.ms, to);
    return {
      joules: before.joules + whole * perPeriod.joules + after.joules,
      cappedMs: before.cappedMs + whole * perPeriod.cappedMs + after.cappedMs,
    };
  }

  /**
   * The run's integrals from `from` to `to`, continuing the sums kept for `from` (the run's start,
   * or its current period's) where they got to, piece by piece, the same pieces in the same order
   * as walked(). Sums kept from another start are dropped (a new period began).
   */
  private summedOnward(physics: GpuPhysics, caps: readonly PowerCap[], run: Run, from: number, to: number): Sums {
    const integrals = integralsOf(run, physics);
    let sum = integrals.summed;
    if (sum === undefined || sum.from !== from) {
      sum = { from, at: from, sums: { joules: 0, cappedMs: 0 } };
      integrals.summed = sum;
    } else if (sum.at > to) {
      // An instant before the sums kept (a driver initialised mid-run): summed afresh, the kept sums left as they are.
      return this.walked(physics, caps, run, from, to);
    }
    for (let next = run.rhythm.nextChange(sum.at); next <= to; next = run.rhythm.nextChange(sum.at)) {
      addPiece(physics.board, run, sum.sums, sum.at, next, run.rhythm.at(sum.at));
      sum.at = next;
    }
    const last = { joules: sum.sums.joules, cappedMs: sum.sums.cappedMs };
    if (to > sum.at) addPiece(physics.board, run, last, sum.at, to, run.rhythm.at(sum.at));
    return last;
  }

  /** The run's integrals from `a` to `b`, walked piece by piece (cut where its power limit changes). */
  private walked(physics: GpuPhysics, caps: readonly PowerCap[], run: Run, a: number, b: number): Sums {
    const sums = { joules: 0, cappedMs: 0 };
    walkRun(
      run,
      a,
      b,
      cutAtChanges(caps, (p, q, load, _, limitW) => addPiece(physics.board, run, sums, p, q, load, limitW)),
    );
    return sums;
  }
}

/** Adds one piece of a run to `into`: its energy, and its time under the power cap. */
function addPiece(board: Board, run: Run, into: Sums, from: number, till: number, load: Load, limitW?: number): void {
  const draw = board.draw(load, run.intensity, limitW);
  into.joules += draw.watts * ((till - from) / SECOND);
  if (draw.capped) into.cappedMs += till - from;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
