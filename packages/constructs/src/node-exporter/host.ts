/**
 * A node's kernel as node-exporter reads it (/proc/stat, /proc/meminfo, /proc/loadavg, /proc/vmstat): the CPU
 * time and memory of every container the kubelet runs on it (kubelet/containers.ts, usage.ts),
 * plus what runs outside Kubernetes — the kubelet, containerd, the kernel — since the node booted.
 * Every value is a function of (node, time) and the containers' own pure usage, so it agrees with
 * cAdvisor's container series at every instant, whoever reads it and how often.
 *
 * The shares below are modelling choices with the bases given beside them, not measurements of a
 * DGX node: cantfind.md `node-exporter.host-model`.
 */
import type { Stopped } from "../kubelet/containers.js";
import type { ContainerUsage } from "../kubelet/usage.js";
import { containerUsage, cpuSeconds, type MemoryUse, memoryUse, SYSTEM_PROFILE } from "../kubelet/usage.js";
import { between } from "../noise.js";
import type { CpuMode } from "./families.js";

const GIB = 2 ** 30;

/**
 * What runs outside the kubepods slice — the kubelet, containerd and its shims, journald, the
 * NVIDIA persistence daemon, kernel threads — as one usage with the system agents' profile
 * (usage.ts: a tenth of what they are sized for, with a wave): about half a core and 4 GiB
 * resident.
 */
const HOST_CPU_MILLI = 5000;
const HOST_MEMORY_BYTES = 10 * GIB;

/**
 * How busy time splits among the kernel's modes (/proc/stat): mostly user time (the data
 * loaders, the servers), system time for the syscalls and page faults around it (cAdvisor's split
 * of the same containers: kubelet/index.ts USER_SHARE), a little interrupt and softirq time for
 * the NICs, and nice time for the odd niced maintenance job; no steal on bare metal. I/O wait is
 * idle time spent with I/O outstanding: a share on top of the busy time (datasets read from disk).
 */
const BUSY_SHARES: Readonly<Record<Exclude<CpuMode, "idle" | "iowait" | "steal">, number>> = {
  user: 0.84,
  nice: 0.005,
  system: 0.13,
  irq: 0.005,
  softirq: 0.02,
};
const IOWAIT_SHARE = 0.03;

/** The kernel's slab caches (dentries, inodes, network buffers): a small share of memory. */
const SLAB_SHARE = 0.004;
/** Page cache of what the host itself reads (the OS, container images under /var/lib/containerd). */
const HOST_CACHE_SHARE = 0.02;
const BUFFERS_SHARE = 0.0005;
/** What of the page cache and slab the kernel counts as reclaimable into MemAvailable. */
const RECLAIMABLE_CACHE = 0.9;
const RECLAIMABLE_SLAB = 0.5;

/** USER_HZ: /proc/stat counts in hundredths of a second. */
const tick = (seconds: number) => Math.round(seconds * 100) / 100;
/** /proc/meminfo counts kB of 4 KiB pages. */
const pages = (bytes: number) => Math.max(0, Math.round(bytes / 4096) * 4096);

/**
 * /proc/vmstat's background, whatever the containers do: the daemons' minor faults, the odd major
 * fault of a binary or library paged in, the logs and journals written.
 */
const BACKGROUND = { minorFaultsPerS: 2000, majorFaultsPerS: 0.05, pagedInKiBPerS: 16, pagedOutKiBPerS: 256 } as const;
/** The share of the page cache read in through faults on mapped files (major faults) rather than read(). */
const MAPPED_CACHE_SHARE = 0.01;

/** A node's containers at an instant, as the host sums them. */
export interface HostContainers {
  /** Running containers' usage (system pods' and users'). */
  readonly running: readonly { readonly usage: ContainerUsage }[];
  /** What the users' containers that stopped since the node booted used. */
  readonly stopped: Stopped;
}

/** The /proc/vmstat fields node-exporter reads by default (--collector.vmstat.fields), since boot. */
export interface Vmstat {
  readonly oomKill: number;
  readonly pgfault: number;
  readonly pgmajfault: number;
  readonly pgpgin: number;
  readonly pgpgout: number;
  readonly pswpin: number;
  readonly pswpout: number;
}

/** One node's kernel counters. */
export class NodeHost {
  /** Each CPU's share of the node's busy time: CPUs differ, as a scheduler's placement leaves them. */
  readonly cpuWeights: readonly number[];
  private readonly host: ContainerUsage;
  private readonly memTotal: number;

  constructor(
    readonly node: string,
    readonly cpus: number,
    memoryBytes: number,
    /** When the node booted (simulated ms; before the run for a node up at its start). */
    readonly bootMs: number,
    /** Mean busy cores before the run (the counters at boot + uptime hold what ran then). */
    private readonly preRunBusyCores: number,
  ) {
    const raw = Array.from({ length: cpus }, (_, cpu) => between(`${node}/cpu${cpu}`, 0.6, 1.4));
    const sum = raw.reduce((a, b) => a + b, 0);
    this.cpuWeights = raw.map((w) => w / sum);
    this.host = containerUsage(`${node}/host/${bootMs}`, SYSTEM_PROFILE, HOST_CPU_MILLI, HOST_MEMORY_BYTES, bootMs);
    this.memTotal = memoryBytes;
  }

  /** Busy CPU seconds of the whole node since boot, at `t`. */
  busySeconds(containers: HostContainers, t: number): number {
    let busy = this.preRunSeconds() + containers.stopped.cpuSeconds + cpuSeconds(this.host, t);
    for (const c of containers.running) busy += cpuSeconds(c.usage, t);
    return busy;
  }

  /**
   * Seconds CPU `cpu` has spent in each mode since boot, given the node's busy seconds at `t`,
   * written into `out` in CPU_MODES' order (a scrape reads thousands of CPUs: no object each).
   */
  cpuModes(cpu: number, busySeconds: number, t: number, out: Float64Array): void {
    const busy = busySeconds * (this.cpuWeights[cpu] as number);
    const iowait = busy * IOWAIT_SHARE;
    out[0] = tick(busy * BUSY_SHARES.user);
    out[1] = tick(busy * BUSY_SHARES.nice);
    out[2] = tick(busy * BUSY_SHARES.system);
    out[3] = tick((t - this.bootMs) / 1000 - busy - iowait);
    out[4] = tick(iowait);
    out[5] = tick(busy * BUSY_SHARES.irq);
    out[6] = tick(busy * BUSY_SHARES.softirq);
    out[7] = 0;
  }

  /**
   * The 1, 5 and 15 minute load averages: the runnable tasks (busy cores) and those in
   * uninterruptible I/O wait, averaged over each window, as /proc/loadavg prints them.
   */
  load(containers: HostContainers, t: number): readonly [number, number, number] {
    const windowed = (minutes: number) => {
      const from = Math.max(this.bootMs, t - minutes * 60_000);
      if (t <= from) return 0;
      let seconds = cpuSeconds(this.host, t) - cpuSeconds(this.host, from);
      for (const c of containers.running) seconds += cpuSeconds(c.usage, t) - cpuSeconds(c.usage, from);
      return Math.round((seconds / ((t - from) / 1000)) * (1 + IOWAIT_SHARE) * 100) / 100;
    };
    return [windowed(1), windowed(5), windowed(15)];
  }

  /** Resident memory and page cache at `t` of the running containers and the host (its daemons, the files it reads). */
  inUse(containers: HostContainers, t: number): MemoryUse {
    const host = memoryUse(this.host, t);
    let rss = host.rss;
    let cache = host.cache + this.memTotal * HOST_CACHE_SHARE;
    for (const c of containers.running) {
      const m = memoryUse(c.usage, t);
      rss += m.rss;
      cache += m.cache;
    }
    return { rss, cache };
  }

  /** /proc/meminfo from the memory in use (inUse): the containers' and the host's, and the kernel's own. */
  memory({ rss, cache }: MemoryUse): Readonly<Record<"total" | "free" | "available" | "buffers" | "cached" | "slab", number>> {
    const slab = pages(this.memTotal * SLAB_SHARE);
    const buffers = pages(this.memTotal * BUFFERS_SHARE);
    const cached = pages(cache);
    const free = pages(this.memTotal - rss - cached - buffers - slab);
    return {
      total: this.memTotal,
      free,
      available: pages(free + (cached + buffers) * RECLAIMABLE_CACHE + slab * RECLAIMABLE_SLAB),
      buffers,
      cached,
      slab,
    };
  }

  /**
   * /proc/vmstat at `t`, given the memory in use then: every page the containers and the host
   * brought in faulted in once (minor faults), the page cache read in from disk (pgpgin, in KiB; a
   * hundredth of it through mapped files: major faults), the background above, no swap, and the
   * containers the OOM killer ended.
   */
  vmstat(containers: HostContainers, now: MemoryUse, t: number): Vmstat {
    const uptime = (t - this.bootMs) / 1000;
    const memory = now.rss + now.cache + containers.stopped.memoryBytes;
    const cache = now.cache + containers.stopped.cacheBytes;
    return {
      oomKill: containers.stopped.oomKills,
      pgfault: Math.round(uptime * BACKGROUND.minorFaultsPerS + memory / 4096),
      pgmajfault: Math.round(uptime * BACKGROUND.majorFaultsPerS + (cache / 4096) * MAPPED_CACHE_SHARE),
      pgpgin: Math.round(uptime * BACKGROUND.pagedInKiBPerS + cache / 1024),
      pgpgout: Math.round(uptime * BACKGROUND.pagedOutKiBPerS),
      pswpin: 0,
      pswpout: 0,
    };
  }

  /** Busy seconds the counters held when the run began (0 for a node booted during it). */
  private preRunSeconds(): number {
    return this.bootMs < 0 ? (-this.bootMs / 1000) * this.preRunBusyCores : 0;
  }
}
