/**
 * What a GPU is doing, as DCGM would read it: utilisation, power, temperatures, clocks,
 * framebuffer and energy, all consistent with each other and with the workload holding the
 * GPU. Shapes follow these sources:
 * - training sits near saturation (run-ai/fake-gpu-operator v0.2.0 draws train pods from
 *   80–100 %), with communication dips synchronised across all GPUs of the job (Patel et al.,
 *   "Characterizing Power Management Opportunities for LLMs in the Cloud", ASPLOS'24);
 * - interactive workspaces are mostly idle with short bursts (allocated-but-idle is the fleet
 *   norm: Alibaba PAI 2020 trace, NSDI'22, median per-instance utilisation 1.5 % in a
 *   third-party re-analysis);
 * - inference follows a diurnal request load;
 * - power moves between the model's idle draw and its limit with activity; temperatures follow
 *   power with a lag; used + free + reserved framebuffer = total; the energy counter is the
 *   integral of power since the driver last initialised the GPU.
 * Numbers that no source pins (dip length, lag constants, fractions) are stated below as
 * modelling choices. One model instance serves every construct that reports GPU activity
 * (dcgm-exporter and the Run:ai exporters), so they always agree.
 */
import type { GpuModel } from "@gpusynth/blueprint";
import type { DeepReadonly, Gpu, Workload } from "@gpusynth/sim";
import { between, unitHash } from "./noise.js";

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
  readonly pcieTxBytesPerSecond: number;
  readonly pcieRxBytesPerSecond: number;
}

interface GpuState {
  at: number;
  reading?: GpuReading;
  /** Last simulated time the GPU was not idle (Run:ai's "last GPU utilization time"). */
  lastBusyAt: number | null;
  initialisedAt: number;
  powerW: number;
  energyMj: number;
  gpuTempC: number;
  memoryTempC: number;
}

const SECOND = 1_000;
const FIVE_MINUTES = 300_000;
/** Modelling choice: first-order thermal lag of the die and of HBM behind power. */
const GPU_TEMP_LAG_MS = 60_000;
const MEMORY_TEMP_LAG_MS = 90_000;

/**
 * Idle and fully loaded temperatures (°C) per architecture, from NVIDIA's nvml-mock profiles
 * (run-ai/fake-gpu-operator @v0.2.0) and public nvidia-smi captures.
 */
const TEMPERATURES = {
  ampere: { gpuIdle: 33, gpuLoad: 72, memoryIdle: 31, memoryLoad: 75 },
  hopper: { gpuIdle: 35, gpuLoad: 71, memoryIdle: 35, memoryLoad: 78 },
} as const;

export class GpuActivityModel {
  private readonly states = new Map<string, GpuState>();

  /** Reads a GPU at simulated time t (ms): the same reading for repeated reads at one t. */
  read(gpu: DeepReadonly<Gpu>, model: GpuModel, t: number): GpuReading {
    const cached = this.states.get(gpu.uuid);
    if (cached?.reading !== undefined && cached.at === t && cached.initialisedAt === gpu.initialisedAt) return cached.reading;
    const workload = gpu.holder?.workload ?? null;
    const activity = activityOf(workload, t);
    const temps = TEMPERATURES[model.architecture];
    const headroom = model.powerLimitW - model.idlePowerW;
    const busy = activity.util / 100;
    const intensity = workload === null ? 0 : between(`${workload.uid}/power`, 0.8, 1);
    const jitter = (unitHash(gpu.uuid, Math.floor(t / 15_000)) - 0.5) * 0.04 * model.idlePowerW;
    const powerW = Math.min(
      model.powerLimitW,
      Math.max(model.idlePowerW * 0.95, model.idlePowerW + headroom * busy ** 1.2 * intensity + jitter),
    );

    const state = this.stateOf(gpu, t, powerW, temps.gpuIdle, temps.memoryIdle);
    const dt = Math.max(0, t - state.at);
    state.energyMj += ((state.powerW + powerW) / 2) * (dt / SECOND) * 1_000;
    const load = (powerW - model.idlePowerW) / headroom;
    state.gpuTempC += (temps.gpuIdle + (temps.gpuLoad - temps.gpuIdle) * load - state.gpuTempC) * (1 - Math.exp(-dt / GPU_TEMP_LAG_MS));
    state.memoryTempC +=
      (temps.memoryIdle + (temps.memoryLoad - temps.memoryIdle) * load - state.memoryTempC) * (1 - Math.exp(-dt / MEMORY_TEMP_LAG_MS));
    state.powerW = powerW;
    state.at = t;

    // Near the power limit the SM clock drops (H100 at a 700 W cap: ~1590 of 1980 MHz, a third-party nvidia-smi example).
    const capPressure = Math.max(0, (powerW / model.powerLimitW - 0.85) / 0.15);
    const smClockMHz = busy === 0 ? model.smClockIdleMHz : Math.round(model.smClockMaxMHz * (1 - 0.2 * capPressure));
    const available = model.framebufferMiB - model.framebufferReservedMiB;
    const fbUsedMiB = Math.round(available * activity.memoryShare);
    const pcie = workload === null ? 0 : between(`${workload.uid}/pcie`, 2e7, 6e8);
    const reading: GpuReading = {
      gpuUtil: Math.round(activity.util),
      memCopyUtil: Math.round(activity.dram * 100),
      grEngineActive: round3(busy * activity.engineShare),
      tensorActive: round3(busy * activity.tensorShare),
      dramActive: round3(activity.dram),
      powerW: Math.round(powerW * 1000) / 1000,
      gpuTempC: Math.round(state.gpuTempC),
      memoryTempC: Math.round(state.memoryTempC),
      smClockMHz,
      memClockMHz: model.memoryClockMHz,
      fbUsedMiB,
      fbFreeMiB: available - fbUsedMiB,
      fbReservedMiB: model.framebufferReservedMiB,
      energyMj: Math.floor(state.energyMj),
      pcieTxBytesPerSecond: Math.round(pcie * busy + 5e4),
      pcieRxBytesPerSecond: Math.round(pcie * 1.5 * busy + 5e4),
    };
    state.reading = reading;
    if (reading.gpuUtil > 0) state.lastBusyAt = t;
    return reading;
  }

  /** Last simulated time a read found the GPU busy, or null. */
  lastBusyAt(gpu: DeepReadonly<Gpu>): number | null {
    return this.states.get(gpu.uuid)?.lastBusyAt ?? null;
  }

  private stateOf(gpu: DeepReadonly<Gpu>, t: number, powerW: number, gpuTempC: number, memoryTempC: number): GpuState {
    let state = this.states.get(gpu.uuid);
    if (state === undefined || state.initialisedAt !== gpu.initialisedAt) {
      // A (re)initialised driver starts the energy counter at zero, from the time it came up.
      const keepTemps = state !== undefined;
      state = {
        lastBusyAt: state?.lastBusyAt ?? null,
        at: Math.min(t, gpu.initialisedAt === 0 ? t : gpu.initialisedAt),
        initialisedAt: gpu.initialisedAt,
        powerW,
        energyMj: 0,
        gpuTempC: keepTemps ? (state as GpuState).gpuTempC : gpuTempC,
        memoryTempC: keepTemps ? (state as GpuState).memoryTempC : memoryTempC,
      };
      this.states.set(gpu.uuid, state);
    }
    return state;
  }
}

interface Activity {
  readonly util: number;
  readonly engineShare: number;
  readonly tensorShare: number;
  readonly dram: number;
  readonly memoryShare: number;
}

const IDLE: Activity = { util: 0, engineShare: 0, tensorShare: 0, dram: 0, memoryShare: 0 };

/** Activity of a GPU held by `workload` at time t (ms); the same for every GPU of the workload. */
function activityOf(workload: DeepReadonly<Workload> | null, t: number): Activity {
  // No container runs while a failed one waits out the kubelet's back-off.
  if (workload === null || (workload.backoffUntil !== null && t < workload.backoffUntil)) return IDLE;
  const id = workload.uid;
  switch (workload.type) {
    case "training":
    case "distributed-training": {
      // Modelling choice: a step of 20–90 s whose last 15 % is a communication dip to 60 %.
      const step = between(`${id}/step`, 20_000, 90_000);
      const phase = ((t + between(`${id}/phase`, 0, step)) % step) / step;
      const base = between(`${id}/util`, 80, 100);
      const starting = workload.runningSince !== null && t - workload.runningSince < 60_000;
      const util = starting ? base * 0.2 : phase > 0.85 ? base * 0.6 : base;
      return {
        util,
        engineShare: between(`${id}/engine`, 0.85, 0.98),
        tensorShare: between(`${id}/tensor`, 0.3, 0.6),
        dram: (util / 100) * between(`${id}/dram`, 0.3, 0.6),
        memoryShare: between(`${id}/fb`, 0.4, 0.95),
      };
    }
    case "interactive": {
      // Mostly idle: in one five-minute window out of five the user runs something.
      const bucket = Math.floor(t / FIVE_MINUTES);
      const active = unitHash(`${id}/burst`, bucket) < 0.2;
      const util = active ? between(`${id}/burst-util`, 10, 70, bucket) : 0;
      return { util, engineShare: 0.9, tensorShare: 0.2, dram: (util / 100) * 0.3, memoryShare: between(`${id}/fb`, 0.05, 0.6) };
    }
    case "inference": {
      // Load follows the day (peak mid-afternoon UTC), with five-minute jitter.
      const hour = (t / 3_600_000) % 24;
      const load =
        0.5 + 0.35 * Math.cos((2 * Math.PI * (hour - 15)) / 24) + 0.15 * (unitHash(`${id}/load`, Math.floor(t / FIVE_MINUTES)) - 0.5);
      const util = 100 * load * between(`${id}/util`, 0.3, 0.9);
      return {
        util,
        engineShare: 0.9,
        tensorShare: 0.15,
        dram: Math.min(1, (util / 100) * 1.2),
        memoryShare: between(`${id}/fb`, 0.3, 0.9),
      };
    }
    default:
      return IDLE;
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
