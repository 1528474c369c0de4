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
 * - no two GPUs read alike: each has its own idle draw, power efficiency, idle temperature
 *   and idle PCIe chatter (silicon and cooling vary: the spread of a fleet's idle readings in
 *   public nvidia-smi captures is a few watts and a few °C), each rank of a job its own small
 *   utilisation offset and scrape-to-scrape noise, so busy GPUs touch 100 %; power also follows
 *   how much of the work is tensor math versus memory traffic, not utilisation alone; the
 *   framebuffer grows while a job's allocator warms up and moves a little with every step,
 *   rank 0 holding somewhat more; the energy counter counts from the driver's load, days
 *   before the simulation starts for GPUs already up then.
 * Numbers that no source pins (dip length, lag constants, fractions, spreads) are stated below
 * as modelling choices. One model instance serves every construct that reports GPU activity
 * (dcgm-exporter and the Run:ai exporters), so they always agree.
 */
import type { GpuModel } from "@gpusynth/blueprint";
import type { DeepReadonly, Gpu, Workload } from "@gpusynth/sim";
import type { ImagePulls } from "./kube/image-pulls.js";
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

/** What sets one GPU apart from another of its model for its whole life (modelling choices). */
interface GpuTraits {
  /** Idle draw relative to the model's, −4 % to +8 %. */
  readonly idlePowerFactor: number;
  /** Watts per unit of work relative to the model's, ±5 %. */
  readonly efficiency: number;
  /** Offset of its idle and loaded temperatures, −3 to +4 °C (airflow position). */
  readonly tempOffsetC: number;
  /** Bytes per second on the PCIe link while nothing runs (driver and telemetry traffic). */
  readonly idlePcie: number;
  /** How long its driver had been loaded when the simulation started (1 to 60 days). */
  readonly uptimeMs: number;
}

const DAY = 86_400_000;

function traitsOf(uuid: string): GpuTraits {
  return {
    idlePowerFactor: between(`${uuid}/idle-power`, 0.96, 1.08),
    efficiency: between(`${uuid}/efficiency`, 0.95, 1.05),
    tempOffsetC: between(`${uuid}/temp`, -3, 4),
    idlePcie: between(`${uuid}/pcie-idle`, 2e4, 2.5e5),
    uptimeMs: between(`${uuid}/uptime`, DAY, 60 * DAY),
  };
}

/** A number in [-1, 1) fixed for a key and a time bucket: scrape-to-scrape noise. */
function noise(key: string, bucket: number): number {
  return unitHash(key, bucket) * 2 - 1;
}

export class GpuActivityModel {
  private readonly states = new Map<string, GpuState>();
  private readonly traits = new Map<string, GpuTraits>();

  /** `pulls`: a pod's GPUs do nothing until its container starts (after its image is pulled). */
  constructor(private readonly pulls?: ImagePulls) {}

  private traitsOf(uuid: string): GpuTraits {
    let traits = this.traits.get(uuid);
    if (traits === undefined) {
      traits = traitsOf(uuid);
      this.traits.set(uuid, traits);
    }
    return traits;
  }

  /** Reads a GPU at simulated time t (ms): the same reading for repeated reads at one t. */
  read(gpu: DeepReadonly<Gpu>, model: GpuModel, t: number): GpuReading {
    const cached = this.states.get(gpu.uuid);
    if (cached?.reading !== undefined && cached.at === t && cached.initialisedAt === gpu.initialisedAt) return cached.reading;
    // Bound, but the container is not running yet: the GPU idles while the image is pulled.
    const workload = gpu.holder === null || this.pulls?.creating(gpu.holder.uid, t) === true ? null : gpu.holder.workload;
    const traits = this.traitsOf(gpu.uuid);
    const second = Math.floor(t / SECOND);
    const rank = rankOf(gpu);
    const activity = activityOf(workload, t, rank, gpu.uuid);
    const base = TEMPERATURES[model.architecture];
    // A slow ambient swing through the day (data-hall air: ±1.5 °C, a modelling choice).
    const ambient = 1.5 * Math.sin((2 * Math.PI * ((t / 3_600_000) % 24)) / 24) + traits.tempOffsetC;
    const temps = {
      gpuIdle: base.gpuIdle + ambient,
      gpuLoad: base.gpuLoad + ambient,
      memoryIdle: base.memoryIdle + ambient,
      memoryLoad: base.memoryLoad + ambient,
    };
    const idleW = model.idlePowerW * traits.idlePowerFactor;
    const headroom = model.powerLimitW - idleW;
    const busy = activity.util / 100;
    // Tensor-core math draws more than memory-bound phases at the same utilisation.
    const work = busy ** 1.2 * (0.7 + 0.3 * (activity.tensorShare / 0.6)) * (1 - 0.25 * activity.memoryBound);
    const intensity = workload === null ? 0 : between(`${workload.uid}/power`, 0.8, 1);
    const jitter = noise(gpu.uuid, second) * (0.02 * model.idlePowerW + 0.03 * headroom * busy);
    const powerW = Math.min(model.powerLimitW, Math.max(idleW * 0.97, idleW + headroom * work * intensity * traits.efficiency + jitter));

    const state = this.stateOf(gpu, t, powerW, temps.gpuIdle, temps.memoryIdle, idleW, traits);
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
    const fbUsedMiB = Math.min(available, Math.round(available * activity.memoryShare));
    const pcie = workload === null ? 0 : between(`${workload.uid}/pcie`, 2e7, 6e8) * (1 + 0.2 * noise(gpu.uuid, second + 7));
    const idlePcie = traits.idlePcie * (1 + 0.3 * noise(gpu.uuid, second + 13));
    const reading: GpuReading = {
      gpuUtil: Math.round(activity.util),
      memCopyUtil: Math.round(activity.dram * 100),
      grEngineActive: round3(busy * activity.engineShare),
      tensorActive: round3(busy * activity.tensorShare),
      dramActive: round3(activity.dram),
      powerW: Math.round(powerW * 1000) / 1000,
      gpuTempC: Math.round(state.gpuTempC + 0.6 * noise(gpu.uuid, second + 3)),
      memoryTempC: Math.round(state.memoryTempC + 0.6 * noise(gpu.uuid, second + 5)),
      smClockMHz,
      memClockMHz: model.memoryClockMHz,
      fbUsedMiB,
      fbFreeMiB: available - fbUsedMiB,
      fbReservedMiB: model.framebufferReservedMiB,
      energyMj: Math.floor(state.energyMj),
      pcieTxBytesPerSecond: Math.round(pcie * busy + idlePcie),
      pcieRxBytesPerSecond: Math.round(pcie * 1.5 * busy + idlePcie * 1.2),
    };
    state.reading = reading;
    if (reading.gpuUtil > 0) state.lastBusyAt = t;
    return reading;
  }

  /** Last simulated time a read found the GPU busy, or null. */
  lastBusyAt(gpu: DeepReadonly<Gpu>): number | null {
    return this.states.get(gpu.uuid)?.lastBusyAt ?? null;
  }

  private stateOf(
    gpu: DeepReadonly<Gpu>,
    t: number,
    powerW: number,
    gpuTempC: number,
    memoryTempC: number,
    idleW: number,
    traits: GpuTraits,
  ): GpuState {
    let state = this.states.get(gpu.uuid);
    if (state === undefined || state.initialisedAt !== gpu.initialisedAt) {
      // A (re)initialised driver starts the energy counter at zero, from the time it came up; a
      // GPU up when the simulation starts has counted since its driver loaded, days before.
      const keepTemps = state !== undefined;
      const before = gpu.initialisedAt === 0 && state === undefined ? idleW * (traits.uptimeMs / SECOND) * 1_000 : 0;
      state = {
        lastBusyAt: state?.lastBusyAt ?? null,
        at: Math.min(t, gpu.initialisedAt === 0 ? t : gpu.initialisedAt),
        initialisedAt: gpu.initialisedAt,
        powerW,
        energyMj: before,
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
  /** 0–1: how memory-bound the current phase is (it draws less power at the same utilisation). */
  readonly memoryBound: number;
}

const IDLE: Activity = { util: 0, engineShare: 0, tensorShare: 0, dram: 0, memoryShare: 0, memoryBound: 0 };

/** The GPU's position among its workload's GPUs (rank 0 first), or 0 when no pod holds it. */
function rankOf(gpu: DeepReadonly<Gpu>): number {
  const pod = gpu.holder;
  if (pod === null) return 0;
  let rank = 0;
  for (const p of pod.workload.pods) {
    if (p === pod) return rank + p.gpus.indexOf(gpu);
    rank += p.gpus.length;
  }
  return rank;
}

/**
 * A job's framebuffer share at time t: the caching allocator grows toward its peak over the
 * first minutes of a run (time constant 2 minutes, a modelling choice), rank 0 holds 2–8 % more
 * (it keeps the extra buffers of logging and checkpoints), and every step moves it by about 1 %.
 */
function framebufferShare(target: number, workload: DeepReadonly<Workload>, t: number, rank: number, uuid: string): number {
  const ranFor = workload.runningSince === null ? 0 : Math.max(0, t - workload.runningSince);
  const warm = 1 - 0.6 * Math.exp(-ranFor / 120_000);
  const rankExtra = rank === 0 ? between(`${workload.uid}/fb-rank0`, 0.02, 0.08) : 0;
  return Math.min(0.99, Math.max(0, target * warm * (1 + rankExtra + 0.01 * noise(uuid, Math.floor(t / 15_000) + 11))));
}

/** Activity of the GPU of rank `rank` held by `workload` at time t (ms). */
function activityOf(workload: DeepReadonly<Workload> | null, t: number, rank: number, uuid: string): Activity {
  // No container runs while a failed one waits out the kubelet's back-off.
  if (workload === null || (workload.backoffUntil !== null && t < workload.backoffUntil)) return IDLE;
  const id = workload.uid;
  const second = Math.floor(t / SECOND);
  switch (workload.type) {
    case "training":
    case "distributed-training": {
      // Modelling choice: a step of 20–90 s whose last 15 % is a communication dip to 60 %, the
      // same for every rank (collectives synchronise them); each rank sits a little above or
      // below the job's level (−4 to +3 points) and moves ±4 points between scrapes, so busy
      // ranks often read 100.
      const step = between(`${id}/step`, 20_000, 90_000);
      const phase = ((t + between(`${id}/phase`, 0, step)) % step) / step;
      const base = between(`${id}/util`, 82, 100) + between(`${id}/rank-${rank}`, -4, 3);
      const starting = workload.runningSince !== null && t - workload.runningSince < 60_000;
      const level = starting ? base * 0.2 : phase > 0.85 ? base * 0.6 : base;
      const util = Math.max(0, Math.min(100, level + 4 * noise(uuid, second)));
      // The data-loading part of each step is memory-bound: a third of the step, at a job-specific weight.
      const memoryBound = phase < 0.3 ? between(`${id}/memory-bound`, 0.3, 0.9) : 0.1;
      return {
        util,
        engineShare: between(`${id}/engine`, 0.85, 0.98),
        tensorShare: between(`${id}/tensor`, 0.3, 0.6) * (1 - 0.5 * memoryBound),
        dram: Math.min(1, (util / 100) * (between(`${id}/dram`, 0.3, 0.6) + 0.3 * memoryBound)),
        memoryShare: framebufferShare(between(`${id}/fb`, 0.4, 0.95), workload, t, rank, uuid),
        memoryBound,
      };
    }
    case "interactive": {
      // Mostly idle: in one five-minute window out of five the user runs something.
      const bucket = Math.floor(t / FIVE_MINUTES);
      const active = unitHash(`${id}/burst`, bucket) < 0.2;
      const util = active ? Math.max(1, between(`${id}/burst-util`, 10, 70, bucket) + 8 * noise(uuid, second)) : 0;
      return {
        util,
        engineShare: 0.9,
        tensorShare: 0.2,
        dram: (util / 100) * 0.3,
        memoryShare: framebufferShare(between(`${id}/fb`, 0.05, 0.6), workload, t, rank, uuid),
        memoryBound: 0.5,
      };
    }
    case "inference": {
      // Load follows the day (peak mid-afternoon UTC), with five-minute jitter.
      const hour = (t / 3_600_000) % 24;
      const load =
        0.5 + 0.35 * Math.cos((2 * Math.PI * (hour - 15)) / 24) + 0.15 * (unitHash(`${id}/load`, Math.floor(t / FIVE_MINUTES)) - 0.5);
      // Each replica serves its own share of the requests: ±10 % per second.
      const util = Math.max(0, Math.min(100, 100 * load * between(`${id}/util`, 0.3, 0.9) * (1 + 0.1 * noise(uuid, second))));
      return {
        util,
        engineShare: 0.9,
        tensorShare: 0.15,
        dram: Math.min(1, (util / 100) * 1.2),
        // Model weights and the KV cache are allocated at start: no warm-up growth.
        memoryShare: Math.min(0.99, between(`${id}/fb`, 0.3, 0.9) * (1 + 0.01 * noise(uuid, Math.floor(t / 15_000) + 11))),
        memoryBound: 0.7,
      };
    }
    default:
      return IDLE;
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
