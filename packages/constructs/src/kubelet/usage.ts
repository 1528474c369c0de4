/**
 * What a container uses of its node's CPU and memory, as a pure function of (container, time):
 * any reader at any cadence sees the same value at the same instant, as with GPU physics. CPU is
 * a level with a slow wave on top (a data loader's epochs, an inference server's traffic, a
 * notebook's cells), integrated in closed form so the counter never walks; memory fills towards
 * a plateau after the start (a model loaded, buffers allocated) with the page cache of what the
 * container reads filling more slowly beside it.
 *
 * The levels are a modelling choice, not measured: no public trace gives the CPU and memory a
 * GPU training, inference or notebook container uses over its life (cantfind.md,
 * `kubelet.container-usage-levels`). They are fractions of what the container requests, so a
 * node's totals stay within what the scheduler placed on it.
 */
import type { WorkloadType } from "@gpusynth/blueprint";
import { between } from "../noise.js";

/** How a kind of container uses what it requested. */
export interface UsageProfile {
  /** Mean CPU use, as a fraction of the CPU request. */
  readonly cpuLevel: number;
  /** The wave's amplitude, as a fraction of the request (at most cpuLevel: the rate never goes negative). */
  readonly cpuWave: number;
  /** The wave's period (ms). */
  readonly cpuPeriodMs: number;
  /** Resident memory at its plateau, as a fraction of the memory request. */
  readonly rssLevel: number;
  /** How fast resident memory fills after the start (time constant, ms). */
  readonly rssFillMs: number;
  /** Page cache at its plateau, as a fraction of the memory request. */
  readonly cacheLevel: number;
  readonly cacheFillMs: number;
}

const MINUTE = 60_000;

/**
 * Training, on one node or many: data-loader workers decoding and augmenting batches, an epoch a
 * wave; the dataset's files fill the page cache.
 */
const TRAINING: UsageProfile = {
  cpuLevel: 0.35,
  cpuWave: 0.1,
  cpuPeriodMs: 20 * MINUTE,
  rssLevel: 0.3,
  rssFillMs: 2 * MINUTE,
  cacheLevel: 0.25,
  cacheFillMs: 30 * MINUTE,
};

/** Per workload type (the users' containers). */
export const WORKLOAD_PROFILES: Readonly<Record<WorkloadType, UsageProfile>> = {
  training: TRAINING,
  "distributed-training": TRAINING,
  // Request handling and batching around the GPU; the model's files cached once loaded.
  inference: {
    cpuLevel: 0.12,
    cpuWave: 0.08,
    cpuPeriodMs: 60 * MINUTE,
    rssLevel: 0.15,
    rssFillMs: MINUTE,
    cacheLevel: 0.1,
    cacheFillMs: 5 * MINUTE,
  },
  // A notebook idles between cells.
  interactive: {
    cpuLevel: 0.03,
    cpuWave: 0.02,
    cpuPeriodMs: 15 * MINUTE,
    rssLevel: 0.05,
    rssFillMs: 10 * MINUTE,
    cacheLevel: 0.03,
    cacheFillMs: 30 * MINUTE,
  },
};

/** The system pods' containers: agents that idle most of the time. */
export const SYSTEM_PROFILE: UsageProfile = {
  cpuLevel: 0.1,
  cpuWave: 0.05,
  cpuPeriodMs: 5 * MINUTE,
  rssLevel: 0.4,
  rssFillMs: MINUTE,
  cacheLevel: 0.1,
  cacheFillMs: 10 * MINUTE,
};

/** What a container without a request is taken to ask for, for its usage (kubelet agents: a few millicores, tens of MiB). */
export const UNREQUESTED = { cpuMilli: 10, memoryBytes: 64 * 2 ** 20 } as const;

/** A running container as the usage model sees it. */
export interface ContainerUsage {
  readonly profile: UsageProfile;
  /** What it requested (UNREQUESTED where it requested nothing). */
  readonly cpuMilli: number;
  readonly memoryBytes: number;
  /** When it started (simulated ms). */
  readonly from: number;
  /** Its own phase and scale, from its identity: containers of one kind do not move together. */
  readonly phase: number;
  readonly scale: number;
  /**
   * A container that runs out of memory: its working set climbs from a fifth of its limit at the
   * start to the limit at `atMs`, when the OOM killer ends it (a leak, or a batch too large).
   */
  readonly oom?: { readonly limitBytes: number; readonly atMs: number };
  /** A data loader that needs more than its CPU limit (millicores both): it uses the limit, all the time. */
  readonly cpuBound?: { readonly limitMilli: number; readonly needMilli: number };
}

export function containerUsage(
  key: string,
  profile: UsageProfile,
  cpuMilli: number,
  memoryBytes: number,
  from: number,
  oom?: ContainerUsage["oom"],
  cpuBound?: ContainerUsage["cpuBound"],
): ContainerUsage {
  return {
    profile,
    cpuMilli,
    memoryBytes,
    from,
    phase: between(`${key}/phase`, 0, 2 * Math.PI),
    scale: between(`${key}/scale`, 0.8, 1.2),
    ...(oom === undefined ? {} : { oom }),
    ...(cpuBound === undefined ? {} : { cpuBound }),
  };
}

/** The part of the page cache the kernel counts as inactive, which cAdvisor's working set leaves out. */
export const INACTIVE_CACHE = 0.5;

/** cAdvisor's working set: usage (RSS and page cache) less the inactive cache, in whole pages. */
export function workingSet(memory: MemoryUse): number {
  return memory.rss + page(memory.cache * (1 - INACTIVE_CACHE));
}

/** The kernel counts whole 4 KiB pages. */
const page = (bytes: number) => Math.round(bytes / 4096) * 4096;

/** CPU seconds the container has used by `t` (simulated ms): the closed-form integral of its rate. */
export function cpuSeconds(c: ContainerUsage, t: number): number {
  const elapsed = Math.max(0, t - c.from);
  if (c.cpuBound !== undefined) return (c.cpuBound.limitMilli * elapsed) / 1000 / 1000;
  const { cpuLevel, cpuWave, cpuPeriodMs } = c.profile;
  const omega = (2 * Math.PI) / cpuPeriodMs;
  // ∫ level + wave·sin(ωs + φ) ds = level·Δ + wave/ω·(cos φ − cos(ωΔ + φ))
  const coreMs = cpuLevel * elapsed + (cpuWave / omega) * (Math.cos(c.phase) - Math.cos(omega * elapsed + c.phase));
  return (coreMs * c.scale * c.cpuMilli) / 1000 / 1000;
}

/** CPU cores the container uses at `t`: the rate of cpuSeconds (its derivative, in closed form). */
export function cpuCores(c: ContainerUsage, t: number): number {
  if (t < c.from) return 0;
  if (c.cpuBound !== undefined) return c.cpuBound.limitMilli / 1000;
  const { cpuLevel, cpuWave, cpuPeriodMs } = c.profile;
  const omega = (2 * Math.PI) / cpuPeriodMs;
  return ((cpuLevel + cpuWave * Math.sin(omega * (t - c.from) + c.phase)) * c.scale * c.cpuMilli) / 1000;
}

/** The CFS bandwidth counters of a cgroup with a CPU quota (cgroup v2's cpu.stat, as cAdvisor reads them). */
export interface CfsCounters {
  readonly periods: number;
  readonly throttledPeriods: number;
  readonly throttledSeconds: number;
}

/** The CFS period the kubelet leaves at the kernel's default (100 ms). */
export const CFS_PERIOD_MS = 100;

/**
 * A container held at its CPU limit by a loader that needs more: its threads are runnable
 * in every period (nr_periods counts each), run out of quota in every one (nr_throttled too), and
 * wait out the rest of each period on every CPU they would use — the kernel adds each throttled
 * run queue's wait to the cgroup's throttled time — so the throttled time grows by the cores
 * wanted beyond the limit (need − limit) each second. A model of the kernel's accounting
 * (kernel/sched/fair.c), not a measurement: cantfind.md `kubelet.cfs-model`.
 */
export function starvedCfs(c: ContainerUsage, t: number): CfsCounters | undefined {
  if (c.cpuBound === undefined) return undefined;
  const elapsed = Math.max(0, t - c.from);
  const periods = Math.floor(elapsed / CFS_PERIOD_MS);
  const { limitMilli, needMilli } = c.cpuBound;
  return { periods, throttledPeriods: periods, throttledSeconds: ((needMilli - limitMilli) * elapsed) / 1000 / 1000 };
}

/** What the kernel counts of it (bytes). */
export interface MemoryUse {
  readonly rss: number;
  readonly cache: number;
}

/** Resident memory and page cache at `t`. */
export function memoryUse(c: ContainerUsage, t: number): MemoryUse {
  const elapsed = Math.max(0, t - c.from);
  const { rssLevel, rssFillMs, cacheLevel, cacheFillMs } = c.profile;
  const fill = (level: number, fillMs: number) => level * c.scale * c.memoryBytes * (1 - Math.exp(-elapsed / fillMs));
  const cache = page(fill(cacheLevel, cacheFillMs));
  if (c.oom !== undefined) {
    // The working set climbs in a straight line to the limit: RSS is what the cache leaves of it.
    const { limitBytes, atMs } = c.oom;
    const share = Math.min(1, elapsed / Math.max(1, atMs - c.from));
    return { rss: page(limitBytes * (0.2 + 0.8 * share)) - page(cache * (1 - INACTIVE_CACHE)), cache };
  }
  return { rss: page(fill(rssLevel, rssFillMs)), cache };
}
