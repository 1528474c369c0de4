/**
 * A GPU board's physics: what a load draws, how the SM clock answers the power cap, and where its
 * die and memory temperatures settle. Constants are measured on a real NVIDIA H200 (NVML capture,
 * driver 580.159.04, 2026-12-04, committed in packages/blueprint/data/h200-capture/; least-squares
 * fits over both of its traces, `trace.csv` and `long/trace.csv`):
 * - power: a context held without kernels draws 125 W with the SM clock at its maximum; bf16
 *   matrix products (SM 94 %, tensor 91 %, DRAM 17 % in GPM) hold the board at its cap, where
 *   NVML's one-second average reads 691 of 700 W and the SM clock falls to about 1480 MHz with
 *   clocks-event reason 4 (software power cap); device-to-device copies (SM 97 %, tensor 0 %,
 *   DRAM 86 %) draw 410 W at the full 1980 MHz (402–415 W settled in the two traces). Demand is linear in SM, tensor and DRAM
 *   activity; the SM term (0.2 of the headroom) is a choice, the tensor and DRAM terms follow from
 *   the two measured loads and the capped clock (dynamic power ∝ clock², a modelling choice).
 * - temperatures: each is a sum of first-order responses to the true power (not NVML's one-second
 *   average): the die 0.1 s and 5 s, heated more per watt by tensor work; HBM 1 s and 40 s, heated
 *   by DRAM traffic as well, so memory runs cooler than the die under compute-bound work (50 vs
 *   60 °C) and hotter under memory-bound work (53 vs 46 °C). RMS error of the fits: 0.86 °C (die),
 *   0.59 °C (memory), over 6,000 samples.
 * The H100 SXM5 is the same board class with the same cooling and takes these constants as they
 * are; the A100 SXM4 takes their shape, its heating per watt scaled to the loaded temperatures its
 * sources give (the DRAM term is the memory's own and is not scaled).
 */
import { type GpuModel, POWER_CAP_FRACTION } from "@gpusynth/blueprint";
import { type Load, NO_CONTEXT } from "./load.js";

/** Demand above a held context, in fractions of the board's headroom (power limit − context idle), per unit of activity. */
const DEMAND_PER_SM = 0.2;
const DEMAND_PER_TENSOR = 1.664;
const DEMAND_PER_DRAM = 0.351;

/** A first-order thermal mode: its time constant and gains (°C per watt above a held context, °C per unit of tensor·watt or DRAM). */
export interface ThermalMode {
  readonly tauMs: number;
  /** °C per W of power above the context idle. */
  readonly perWatt: number;
  /** Die: °C per W of power above the context idle, times the tensor activity. */
  readonly perTensorWatt: number;
  /** Memory: °C per unit of DRAM activity. */
  readonly perDram: number;
}

/** The H200's fitted modes (see the header). */
export const DIE_MODES: readonly ThermalMode[] = [
  { tauMs: 100, perWatt: 0.0193, perTensorWatt: 0.012, perDram: 0 },
  { tauMs: 5_000, perWatt: 0.009, perTensorWatt: 0.0006, perDram: 0 },
];
export const MEMORY_MODES: readonly ThermalMode[] = [
  { tauMs: 1_000, perWatt: 0.0141, perTensorWatt: 0, perDram: 12.2 },
  { tauMs: 40_000, perWatt: 0.0116, perTensorWatt: 0, perDram: 0 },
];
/** Long enough for the slowest mode to forget where it started (e^-8 of a step). */
export const THERMAL_MEMORY_MS = 8 * 40_000;

/**
 * Idle temperatures without a context (°C) and how strongly the board heats, per architecture.
 * Hopper: the H200 fits' intercepts (die 35.5, memory 34.6 °C at no-context idle; nvidia-smi -q
 * before the capture read 36 and 36). Ampere: idle 33 / 31 °C and 72 / 75 °C at full load, from
 * NVIDIA's nvml-mock A100 profile (run-ai/fake-gpu-operator v0.2.0) and public nvidia-smi
 * captures; the scales make the H200's modes reach those loaded temperatures at the A100's cap.
 */
const ARCHITECTURES = {
  hopper: { dieIdleC: 35.5, memoryIdleC: 34.6, loaded: undefined },
  ampere: { dieIdleC: 33, memoryIdleC: 31, loaded: { dieC: 72, memoryC: 75 } },
} as const;

/** The capture's matrix-product mix: what "full load" means when scaling another board's heating. */
const FULL_LOAD: Load = { util: 100, jitter: 0, engineShare: 0.94, tensorShare: 0.91, dram: 0.17, context: true };

/** What sets one board apart from another of its model (silicon and airflow). */
export interface BoardTraits {
  /** Idle draw relative to the model's. */
  readonly idlePowerFactor: number;
  /** Watts per unit of work relative to the model's. */
  readonly efficiency: number;
  /** Offset of its temperatures (airflow position), °C. */
  readonly tempOffsetC: number;
}

/** What a load does to one board: true power, the SM clock and the clocks-event cause. */
export interface Draw {
  readonly watts: number;
  readonly smClockMHz: number;
  /** The software power cap holds the clock down. */
  readonly capped: boolean;
}

export class Board {
  readonly idleW: number;
  readonly contextW: number;
  private readonly headroomW: number;
  private readonly capW: number;
  readonly dieIdleC: number;
  readonly memoryIdleC: number;
  private readonly dieScale: number;
  private readonly memoryScale: number;

  constructor(
    readonly model: GpuModel,
    private readonly traits: BoardTraits,
  ) {
    this.idleW = model.idlePowerW * traits.idlePowerFactor;
    this.contextW = model.contextIdlePowerW * traits.idlePowerFactor;
    this.headroomW = model.powerLimitW - this.contextW;
    this.capW = model.powerLimitW * POWER_CAP_FRACTION;
    const arch = ARCHITECTURES[model.architecture];
    this.dieIdleC = arch.dieIdleC + traits.tempOffsetC;
    this.memoryIdleC = arch.memoryIdleC + traits.tempOffsetC;
    this.dieScale = 1;
    this.memoryScale = 1;
    if (arch.loaded !== undefined) {
      const die = this.riseToFullLoad(DIE_MODES);
      const memory = this.riseToFullLoad(MEMORY_MODES);
      this.dieScale = (arch.loaded.dieC - arch.dieIdleC - die.dram) / die.perWatt;
      this.memoryScale = (arch.loaded.memoryC - arch.memoryIdleC - memory.dram) / memory.perWatt;
    }
  }

  /**
   * How far the modes carry a temperature from no-context idle to the capture's full load at this
   * board's cap: the part that scales with the chassis' heating per watt, and the part DRAM
   * traffic adds, which is the memory's own and does not scale.
   */
  private riseToFullLoad(modes: readonly ThermalMode[]): { readonly perWatt: number; readonly dram: number } {
    const full = this.draw(FULL_LOAD, 1).watts;
    const heat = (watts: number, load: Load) => modes.reduce((s, m) => s + this.heating(m, watts, load), 0);
    return {
      perWatt: heat(full, FULL_LOAD) - heat(this.idleW, NO_CONTEXT),
      dram: modes.reduce((s, m) => s + m.perDram * FULL_LOAD.dram, 0),
    };
  }

  /**
   * True power and clock under a load; `intensity` (0.8–1 per workload) scales the work's demand.
   * `limitW`: an enforced power limit below the board's own (faults.powerCaps), where one holds.
   */
  draw(load: Load, intensity: number, limitW?: number): Draw {
    if (!load.context) return { watts: this.idleW, smClockMHz: this.model.smClockIdleMHz, capped: false };
    const busy = load.util / 100;
    const activity = DEMAND_PER_SM * busy * load.engineShare + DEMAND_PER_TENSOR * busy * load.tensorShare + DEMAND_PER_DRAM * load.dram;
    const demandW = this.headroomW * activity * intensity * this.traits.efficiency;
    const capW = limitW === undefined ? this.capW : Math.min(this.capW, limitW * POWER_CAP_FRACTION);
    const capDynW = capW - this.contextW;
    if (demandW <= capDynW) return { watts: this.contextW + demandW, smClockMHz: this.model.smClockMaxMHz, capped: false };
    return { watts: capW, smClockMHz: Math.round(this.model.smClockMaxMHz * Math.sqrt(capDynW / demandW)), capped: true };
  }

  /** Where a mode's contribution settles under constant power and load, above the board's baseline. */
  modeTarget(mode: ThermalMode, watts: number, load: Load, die: boolean): number {
    return (die ? this.dieScale : this.memoryScale) * this.heating(mode, watts, load) + mode.perDram * load.dram;
  }

  /** A mode's heating by power, before the chassis' scale. */
  private heating(mode: ThermalMode, watts: number, load: Load): number {
    const above = watts - this.contextW;
    const tensor = (load.util / 100) * load.tensorShare;
    return mode.perWatt * above + mode.perTensorWatt * above * tensor;
  }

  /** The temperature the modes add to: chosen so that a board without a context settles at its idle temperature. */
  baseline(die: boolean): number {
    const cached = die ? this.dieBaseline : this.memoryBaseline;
    if (cached !== undefined) return cached;
    const modes = die ? DIE_MODES : MEMORY_MODES;
    const atIdle = modes.reduce((s, m) => s + this.modeTarget(m, this.idleW, NO_CONTEXT, die), 0);
    const baseline = (die ? this.dieIdleC : this.memoryIdleC) - atIdle;
    if (die) this.dieBaseline = baseline;
    else this.memoryBaseline = baseline;
    return baseline;
  }
  private dieBaseline: number | undefined;
  private memoryBaseline: number | undefined;
}
