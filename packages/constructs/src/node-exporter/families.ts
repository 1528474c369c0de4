/**
 * The node-exporter families gpusynth emits, one place per family: names, types and HELP verbatim
 * from prometheus/node_exporter v1.11.1 (the release kube-prometheus v0.18.0 deploys,
 * manifests/nodeExporter-daemonset.yaml), the collector files named beside each. A family's own
 * labels are listed in the order client_golang writes them (sorted by name). Documented in
 * signals/node-exporter.md under the same ids; what the default collectors expose beyond these is
 * not modelled (cantfind.md `node-exporter.collectors`).
 */
import type { MetricFamily, MetricType } from "../catalogue.js";

const family = (name: string, type: MetricType, help: string, labels: readonly string[] = []): MetricFamily => ({
  id: `node-exporter.${name}`,
  name,
  type,
  help,
  labels,
});

/** meminfo.go: every /proc/meminfo field is a gauge named after it, its HELP the same sentence. */
const meminfo = (field: string) => family(`node_memory_${field}_bytes`, "gauge", `Memory information field ${field}_bytes.`);

/** vmstat_linux.go: each /proc/vmstat field its default --collector.vmstat.fields matches, untyped. */
const vmstat = (field: string) => family(`node_vmstat_${field}`, "untyped", `/proc/vmstat information field ${field}.`);

/** In exposition order: client_golang's Gather sorts the families by name. */
export const NODE = {
  bootTime: family("node_boot_time_seconds", "gauge", "Node boot time, in unixtime."), // stat_linux.go
  cpuSeconds: family("node_cpu_seconds_total", "counter", "Seconds the CPUs spent in each mode.", ["cpu", "mode"]), // cpu_common.go
  load1: family("node_load1", "gauge", "1m load average."), // loadavg.go
  load15: family("node_load15", "gauge", "15m load average."),
  load5: family("node_load5", "gauge", "5m load average."),
  buffers: meminfo("Buffers"),
  cached: meminfo("Cached"),
  memAvailable: meminfo("MemAvailable"),
  memFree: meminfo("MemFree"),
  memTotal: meminfo("MemTotal"),
  slab: meminfo("Slab"),
  swapFree: meminfo("SwapFree"),
  swapTotal: meminfo("SwapTotal"),
  time: family("node_time_seconds", "gauge", "System time in seconds since epoch (1970)."), // time.go
  timexMaxError: family("node_timex_maxerror_seconds", "gauge", "Maximum error in seconds."), // timex.go
  timexOffset: family("node_timex_offset_seconds", "gauge", "Time offset in between local system and reference clock."),
  timexSyncStatus: family("node_timex_sync_status", "gauge", "Is clock synchronized to a reliable server (1 = yes, 0 = no)."),
  oomKill: vmstat("oom_kill"),
  pgfault: vmstat("pgfault"),
  pgmajfault: vmstat("pgmajfault"),
  pgpgin: vmstat("pgpgin"),
  pgpgout: vmstat("pgpgout"),
  pswpin: vmstat("pswpin"),
  pswpout: vmstat("pswpout"),
} as const;

export const NODE_EXPORTER_FAMILIES: readonly MetricFamily[] = Object.values(NODE);

/** The modes cpu_linux.go writes for each CPU, in its order (guest time is its own family, not modelled). */
export const CPU_MODES = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"] as const;
export type CpuMode = (typeof CPU_MODES)[number];
