/**
 * node-exporter on every node, as kube-prometheus v0.18.0 deploys it (a DaemonSet in
 * `monitoring`, its metrics behind kube-rbac-proxy on the host's port 9100, job `node-exporter`):
 * the node's CPU time per CPU and mode, memory, load, paging and OOM kills, boot time and clock (host.ts), from the
 * containers the kubelet runs on it, so that node totals and cAdvisor's containers agree.
 */
import { type Blueprint, nodeCpus, nodeMemoryBytes } from "@gpusynth/blueprint";
import type { ClusterView } from "@gpusynth/sim";
import {
  KeptLabelSets,
  listedTarget,
  type MetricConstruct,
  type ScrapeTarget,
  SeriesByTarget,
  type Share,
  seriesLabels,
  type TargetSamples,
  type TargetSeries,
} from "../catalogue.js";
import { BLUEPRINT_CALENDAR, type StampClock } from "../clock.js";
import type { NodeContainers } from "../kubelet/containers.js";
import { between } from "../noise.js";
import { daemonSetPodName, NODE_EXPORTER_WORKLOAD, systemOf } from "../system-workloads.js";
import { CPU_MODES, NODE, NODE_EXPORTER_FAMILIES } from "./families.js";
import { type HostContainers, NodeHost } from "./host.js";

/** kube-rbac-proxy's --secure-listen-address port in front of node-exporter (manifests/nodeExporter-daemonset.yaml). */
export const NODE_EXPORTER_PORT = 9100;
/** The ServiceMonitor's jobLabel app.kubernetes.io/name (manifests/nodeExporter-serviceMonitor.yaml). */
export const NODE_EXPORTER_JOB = "node-exporter";
/** How long a node takes from its kernel's start to a Ready kubelet (a modelling choice: cantfind.md node-exporter.host-model). */
const BOOT_TO_READY_MS = 60_000;

export class NodeExporterConstruct implements MetricConstruct {
  readonly area = "node-exporter";
  readonly families = NODE_EXPORTER_FAMILIES;
  readonly placement = { perNode: true } as const;
  private readonly targets = new Map<string, ScrapeTarget>();
  /** Each node's exporter's series, kept from one scrape to the next. */
  private readonly series = new SeriesByTarget();
  private readonly hosts = new Map<string, NodeHost>();
  /** Per node: each CPU's label set of each mode, made once. */
  private readonly cpuLabels = new Map<string, readonly (readonly Readonly<Record<string, string>>[])[]>();
  private readonly kept = new KeptLabelSets();
  /** One CPU's seconds per mode, in CPU_MODES' order (reused from CPU to CPU). */
  private readonly modes = new Float64Array(CPU_MODES.length);
  /** When each node booted before the run: just before its system pods were first created (none has restarted since). */
  private readonly firstBoot = new Map<string, number>();

  constructor(
    blueprint: Blueprint,
    private readonly containers: NodeContainers,
    private readonly clock: StampClock = BLUEPRINT_CALENDAR,
  ) {
    for (const pod of systemOf(blueprint).pods) {
      const boot = Math.min(this.firstBoot.get(pod.node) ?? Number.POSITIVE_INFINITY, pod.createdAt);
      this.firstBoot.set(pod.node, boot);
    }
  }

  collect(view: ClusterView, share?: Share): TargetSamples[] {
    const result: TargetSamples[] = [];
    this.kept.startCollect();
    for (const pool of view.pools)
      for (const node of pool.nodes) {
        if (node.status === "rebooting" || (share !== undefined && !share.ownsNode(node.name))) continue;
        const host = this.host(node.name, nodeCpus(pool.spec), nodeMemoryBytes(pool.spec));
        const containers: HostContainers = {
          running: this.containers.on(node.name, view.now),
          stopped: this.containers.stoppedOn(node.name),
        };
        const target = this.target(node.name);
        const series = this.series.begin(target);
        this.samples(series, host, containers, view);
        result.push(listedTarget(target, series.end()));
      }
    return result;
  }

  private samples(out: TargetSeries, host: NodeHost, containers: HostContainers, view: ClusterView): void {
    const t = view.now;
    const node = host.node;
    const unixSeconds = (ms: number) => this.clock(view.startMs + ms) / 1000;
    // A family's one series on the node (no labels of its own), its label set kept.
    const single = (family: (typeof NODE)[keyof typeof NODE], value: number): void => this.kept.add(out, node, family, {}, value);
    single(NODE.bootTime, Math.floor(unixSeconds(host.bootMs)));
    const busy = host.busySeconds(containers, t);
    const labels = this.cpuLabelsOf(host);
    const modes = this.modes;
    for (let cpu = 0; cpu < host.cpus; cpu++) {
      host.cpuModes(cpu, busy, t, modes);
      const perMode = labels[cpu] as readonly Readonly<Record<string, string>>[];
      for (let m = 0; m < CPU_MODES.length; m++)
        out.add(NODE.cpuSeconds, perMode[m] as Readonly<Record<string, string>>, modes[m] as number, host.bootMs);
    }
    const [load1, load5, load15] = host.load(containers, t);
    single(NODE.load1, load1);
    single(NODE.load15, load15);
    single(NODE.load5, load5);
    // Memory in use now, read once for /proc/meminfo and /proc/vmstat.
    const inUse = host.inUse(containers, t);
    const memory = host.memory(inUse);
    single(NODE.buffers, memory.buffers);
    single(NODE.cached, memory.cached);
    single(NODE.memAvailable, memory.available);
    single(NODE.memFree, memory.free);
    single(NODE.memTotal, memory.total);
    single(NODE.slab, memory.slab);
    // The kubelet of v1.30 will not start with swap on (failSwapOn's default): none.
    single(NODE.swapFree, 0);
    single(NODE.swapTotal, 0);
    // The scrape reads the clock a few milliseconds after it starts; chrony keeps it within tens
    // of microseconds of its servers, with a maximum error of a few milliseconds between updates.
    const key = `${node}/${t}`;
    single(NODE.time, unixSeconds(t) + between(`${key}/read`, 0.001, 0.004));
    single(NODE.timexMaxError, Math.round(between(`${key}/maxerror`, 0.0005, 0.012) * 1e6) / 1e6);
    single(NODE.timexOffset, Math.round(between(`${key}/offset`, -5e-5, 5e-5) * 1e9) / 1e9);
    single(NODE.timexSyncStatus, 1);
    const vmstat = host.vmstat(containers, inUse, t);
    single(NODE.oomKill, vmstat.oomKill);
    single(NODE.pgfault, vmstat.pgfault);
    single(NODE.pgmajfault, vmstat.pgmajfault);
    single(NODE.pgpgin, vmstat.pgpgin);
    single(NODE.pgpgout, vmstat.pgpgout);
    single(NODE.pswpin, vmstat.pswpin);
    single(NODE.pswpout, vmstat.pswpout);
  }

  /** The node's kernel model, made again when the node has booted since. */
  private host(node: string, cpus: number, memoryBytes: number): NodeHost {
    const ready = this.containers.lastReady(node);
    const bootMs = ready === undefined ? this.bootBeforeRun(node) : ready - BOOT_TO_READY_MS;
    let host = this.hosts.get(node);
    if (host === undefined || host.bootMs !== bootMs) {
      host = new NodeHost(node, cpus, memoryBytes, bootMs, cpus * between(`${node}/pre-run-busy`, 0.05, 0.2));
      this.hosts.set(node, host);
    }
    return host;
  }

  private bootBeforeRun(node: string): number {
    const firstPod = this.firstBoot.get(node) ?? 0;
    return firstPod - Math.round(between(`${node}/boot`, 60_000, 300_000));
  }

  private cpuLabelsOf(host: NodeHost): readonly (readonly Readonly<Record<string, string>>[])[] {
    let labels = this.cpuLabels.get(host.node);
    if (labels === undefined || labels.length !== host.cpus) {
      labels = Array.from({ length: host.cpus }, (_, cpu) =>
        CPU_MODES.map((mode) => seriesLabels(NODE.cpuSeconds, { cpu: String(cpu), mode })),
      );
      this.cpuLabels.set(host.node, labels);
    }
    return labels;
  }

  private target(node: string): ScrapeTarget {
    let target = this.targets.get(node);
    if (target === undefined) {
      const workload = NODE_EXPORTER_WORKLOAD;
      target = {
        job: NODE_EXPORTER_JOB,
        host: node,
        port: NODE_EXPORTER_PORT,
        path: "/metrics",
        node,
        kubernetes: {
          namespace: workload.namespace,
          service: workload.name,
          serviceLabels: NODE_EXPORTER_SERVICE_LABELS,
          portName: "https",
          // The Service's port is kube-rbac-proxy's, which forwards to node-exporter on 127.0.0.1:9101.
          address: { pod: daemonSetPodName(workload.name, node), container: "kube-rbac-proxy" },
        },
      };
      this.targets.set(node, target);
    }
    return target;
  }
}

/** The node-exporter Service's labels (manifests/nodeExporter-service.yaml). */
const NODE_EXPORTER_SERVICE_LABELS = {
  "app.kubernetes.io/component": "exporter",
  "app.kubernetes.io/name": "node-exporter",
  "app.kubernetes.io/part-of": "kube-prometheus",
  "app.kubernetes.io/version": "1.11.1",
} as const;
