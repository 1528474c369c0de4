/**
 * The GPU models a blueprint may declare, with the physical properties that later layers
 * (DCGM values, capacity) derive from. Each model's comment names its sources: the NVIDIA A100
 * datasheet, NVIDIA's nvml-mock profiles (run-ai/fake-gpu-operator @v0.2.0
 * templates/profiles/builtin.yaml) and public `nvidia-smi` captures.
 * Where a value comes from a third-party `nvidia-smi` capture rather than a vendor document,
 * the comment says so; a later capture from real hardware replaces it.
 */

export interface GpuModel {
  /** The NVML device name (what nvidia-smi and dcgm-exporter's `modelName` show). */
  readonly modelName: string;
  /** GPU Feature Discovery's `nvidia.com/gpu.product` form of the name. */
  readonly product: string;
  readonly architecture: "ampere" | "hopper";
  readonly framebufferMiB: number;
  /** Framebuffer reserved by the driver at idle. */
  readonly framebufferReservedMiB: number;
  readonly powerLimitW: number;
  /** Draw with no process on the GPU (persistence mode, no CUDA context). */
  readonly idlePowerW: number;
  /**
   * Draw while a process holds a CUDA context without running kernels (an allocated-but-idle
   * notebook): the SM clock stays at its maximum. Measured on the H200 (125 W against 79.7 W
   * without one: 7.3 % of its idle-to-limit range); other models take that fraction of theirs.
   */
  readonly contextIdlePowerW: number;
  readonly smClockIdleMHz: number;
  readonly smClockMaxMHz: number;
  readonly memoryClockMHz: number;
  /**
   * PCI bus numbers of the GPUs in the vendor's 8-GPU server (DGX), in nvidia-smi index order,
   * as public `nvidia-smi` / `nvidia-smi topo -m` captures of DGX systems show them [3p].
   */
  readonly pciBusNumbers: readonly number[];
}

export const GPU_MODELS = {
  // A100 SXM4 80GB: name string and 81920 MiB from public nvidia-smi outputs [3p];
  // 400 W default power limit from the A100 datasheet; idle power and clocks from NVIDIA's
  // nvml-mock profile shipped by run-ai/fake-gpu-operator v0.2.0 (templates/profiles/builtin.yaml);
  // 1593 MHz memory clock derived for HBM2e at 3.2 Gb/s (gpusynth's derivation; no vendor document states it).
  "A100-SXM4-80GB": {
    modelName: "NVIDIA A100-SXM4-80GB",
    product: "NVIDIA-A100-SXM4-80GB",
    architecture: "ampere",
    framebufferMiB: 81920,
    framebufferReservedMiB: 583,
    powerLimitW: 400,
    idlePowerW: 72,
    contextIdlePowerW: 96, // 72 + 7.3 % of (400 − 72), transferred from the H200 capture
    smClockIdleMHz: 210,
    smClockMaxMHz: 1410,
    memoryClockMHz: 1593,
    pciBusNumbers: [0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd],
  },
  // H100 SXM5 80GB: name and 81559 MiB total / 516 MiB reserved, 700 W limit, 345/1980 MHz SM and
  // 2619 MHz memory clocks from a real `nvidia-smi -q` of the same HBM3 80 GB board (H800) [3p];
  // idle power 74.7 W from the same capture.
  "H100-80GB-HBM3": {
    modelName: "NVIDIA H100 80GB HBM3",
    product: "NVIDIA-H100-80GB-HBM3",
    architecture: "hopper",
    framebufferMiB: 81559,
    framebufferReservedMiB: 516,
    powerLimitW: 700,
    idlePowerW: 75,
    contextIdlePowerW: 121, // 75 + 7.3 % of (700 − 75), transferred from the H200 capture
    smClockIdleMHz: 345,
    smClockMaxMHz: 1980,
    memoryClockMHz: 2619,
    pciBusNumbers: [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb],
  },
  // H200 SXM 141GB, from an NVML capture of a real H200 (driver 580.159.04, 2026-12-04), committed
  // in packages/blueprint/data/h200-capture/ (its README says what each file shows): the NVML name,
  // 143771 MiB total with 616 MiB reserved, the 700 W default power limit (200-700 W range), SM
  // clocks 345 MHz idle / 1980 MHz max and the 3201 MHz memory clock, and 79.7 W drawn with no
  // context (nvidia-smi-q-before.txt); a context held without kernels draws 124-125 W with the SM
  // clock at 1980 MHz (trace.csv). PCI bus
  // numbers: assumption, a DGX H200 lays its eight GPUs out as a DGX H100 does (the same system
  // with the H200 baseboard, NVIDIA DGX H200 datasheet); the capture's single GPU sat at 00:06.0
  // in a virtual machine.
  H200: {
    modelName: "NVIDIA H200",
    product: "NVIDIA-H200",
    architecture: "hopper",
    framebufferMiB: 143771,
    framebufferReservedMiB: 616,
    powerLimitW: 700,
    idlePowerW: 80,
    contextIdlePowerW: 125,
    smClockIdleMHz: 345,
    smClockMaxMHz: 1980,
    memoryClockMHz: 3201,
    pciBusNumbers: [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb],
  },
} as const satisfies Record<string, GpuModel>;

export type GpuModelId = keyof typeof GPU_MODELS;

/**
 * Where NVML's one-second power average settles under the software power cap: 691 of a 700 W
 * limit on the H200 (packages/blueprint/data/h200-capture/, trace.csv, matrix products).
 */
export const POWER_CAP_FRACTION = 691 / 700;

/**
 * Where a training step's steady draw sits between a held context's draw and the power limit in
 * gpusynth's load model (constructs/src/gpu/load.ts on the board of board.ts): about 85 % of the
 * way, some 600 W on a 700 W H100 (its checkpoint stalls draw less; eval phases less again).
 */
export const TRAINING_DRAW_SHARE = 0.85;

/**
 * The pace of a training job on a board whose enforced limit drops to `watts`: its SM clock's
 * share of what it was at the job's steady draw. The clock answers a cap as the square root of
 * the power above a held context (dynamic power ∝ clock², board.ts), and a compute-bound step
 * runs at its clock; a limit above the steady draw costs nothing.
 */
export function powerCapPace(model: GpuModel, watts: number): number {
  const steady = TRAINING_DRAW_SHARE * (model.powerLimitW - model.contextIdlePowerW);
  const capped = Math.max(0, Math.min(watts, model.powerLimitW) * POWER_CAP_FRACTION - model.contextIdlePowerW);
  return Math.min(1, Math.sqrt(capped / steady));
}
export const GPU_MODEL_IDS = Object.keys(GPU_MODELS) as [GpuModelId, ...GpuModelId[]];

/** The PCI bus id as DCGM and nvidia-smi print it, e.g. "00000000:18:00.0". */
export function pciBusId(model: GpuModel, index: number): string {
  const bus = model.pciBusNumbers[index] ?? 0xc0 + index;
  return `00000000:${bus.toString(16).toUpperCase().padStart(2, "0")}:00.0`;
}
