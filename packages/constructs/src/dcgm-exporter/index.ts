/**
 * The dcgm-exporter construct: one scrape target per GPU node (the DaemonSet pod), one series
 * per GPU and family. Kubernetes pod mapping is on (the Helm chart sets
 * DCGM_EXPORTER_KUBERNETES=true): pod, namespace and container label exactly the GPUs a running
 * pod holds (kubernetes.go, PodMapper) and never a free GPU. A GPU that fell off the bus, or
 * is being reset, returns no data, so its series are missing; a rebooting node's exporter is
 * down, so the node is not a target.
 */
import type { OptionalDcgmCounter } from "@gpusynth/blueprint";
import type { ClusterView, DeepReadonly, Gpu, Node, Pool } from "@gpusynth/sim";
import {
  listedTarget,
  type MetricConstruct,
  type ScrapeTarget,
  SeriesByTarget,
  type Share,
  seriesLabels,
  type TargetSamples,
  type TargetSeries,
} from "../catalogue.js";
import type { GpuActivityModel, GpuReading } from "../gpu/activity.js";
import { containerName } from "../naming.js";
import { daemonSetPodName } from "../system-workloads.js";
import { DCGM, DCGM_FAMILIES } from "./families.js";
import { xidMessage } from "./xid-messages.js";

export interface DcgmOptions {
  /** NVIDIA driver version, the DCGM_FI_DRIVER_VERSION label. */
  readonly driverVersion: string;
  /** Exporter listen port (dcgm-exporter default :9400, pkg/cmd/app.go). */
  readonly port: number;
  /** Prometheus job name of the exporter's scrape. */
  readonly job: string;
  /** The namespace the GPU Operator (and so the exporter's DaemonSet) is installed in. */
  readonly namespace: string;
  /** Fields of the default counters file that ship commented out, enabled as a custom counters file would. */
  readonly extraCounters: readonly OptionalDcgmCounter[];
}

/** The GPU Operator's names for the exporter (assets/state-dcgm-exporter/ @ v26.7.0, signals/dcgm-exporter.md). */
const GPU_OPERATOR_EXPORTER = {
  /** The DaemonSet, its container, and the Service with its `app` label (0400, 0800). */
  name: "nvidia-dcgm-exporter",
  /** The Service port the ServiceMonitor's endpoint names (0400_service.yaml, 0500_service_monitor.yaml). */
  portName: "gpu-metrics",
} as const;

export const DCGM_DEFAULTS: DcgmOptions = {
  // The driver in the vendor's own sample output (dcgm-exporter 4.5.3-4.8.2 README sample).
  driverVersion: "550.163.01",
  port: 9400,
  // The GPU Operator's ServiceMonitor takes the job from the Service's `app` label (jobLabel: app).
  job: GPU_OPERATOR_EXPORTER.name,
  // The GPU Operator README's `helm install -n gpu-operator`.
  namespace: "gpu-operator",
  extraCounters: [],
};

interface GpuLabelSets {
  /** The holder's namespace and pod name, and the last XID, the label sets were made for. */
  readonly holder: string | undefined;
  readonly lastXid: number;
  readonly shared: Readonly<Record<string, string>>;
  readonly xid: Readonly<Record<string, string>>;
}

export class DcgmConstruct implements MetricConstruct {
  readonly area = "dcgm-exporter";
  readonly families = DCGM_FAMILIES;
  /** The GPU Operator's DaemonSet: an exporter on every GPU node. */
  readonly placement = { perNode: true } as const;
  /** Each node's exporter, made once: its DaemonSet pod keeps its name for the node's life. */
  private readonly targets = new Map<string, ScrapeTarget>();
  /** Each GPU's label sets, by UUID (a GPU keeps its UUID for its life, on whichever node). */
  private readonly labelSetsOf = new Map<string, GpuLabelSets>();
  private readonly powerViolation: boolean;
  private readonly thermalViolation: boolean;
  constructor(
    private readonly activity: GpuActivityModel,
    private readonly options: DcgmOptions = DCGM_DEFAULTS,
  ) {
    this.powerViolation = options.extraCounters.includes("DCGM_FI_DEV_POWER_VIOLATION");
    this.thermalViolation = options.extraCounters.includes("DCGM_FI_DEV_THERMAL_VIOLATION");
  }

  /** Every node's exporter, or only those of the nodes `share` owns (a shard's). */
  collect(view: ClusterView, share?: Share): TargetSamples[] {
    const result: TargetSamples[] = [];
    for (const pool of view.pools) {
      for (const node of pool.nodes) {
        if (node.status === "rebooting" || (share !== undefined && !share.ownsNode(node.name))) continue;
        const target = this.target(node.name);
        const series = this.series.begin(target);
        for (const gpu of node.gpus) {
          if (gpu.health !== "ok") continue;
          this.gpuSamples(series, pool, node, gpu, this.activity.read(gpu, pool.model, view.now));
        }
        result.push(listedTarget(target, series.end()));
      }
    }
    return result;
  }

  /** Each node's exporter's series, kept from one scrape to the next. */
  private readonly series = new SeriesByTarget();

  private target(node: string): ScrapeTarget {
    let target = this.targets.get(node);
    if (target === undefined) {
      const { name, portName } = GPU_OPERATOR_EXPORTER;
      target = {
        job: this.options.job,
        host: node,
        port: this.options.port,
        path: "/metrics",
        node,
        kubernetes: {
          namespace: this.options.namespace,
          service: name,
          serviceLabels: { app: name },
          portName,
          // The GPU Operator's nvidia-dcgm-exporter DaemonSet's pod on the node (system-workloads.ts).
          address: { pod: daemonSetPodName(name, node), container: name },
        },
      };
      this.targets.set(node, target);
    }
    return target;
  }

  /**
   * The GPU's label sets: every family but the XID one shares one; both are kept while the GPU's
   * holder and last XID stay the same, so a scrape reuses them (and what encoders kept with them).
   */
  private labelSets(pool: DeepReadonly<Pool>, node: DeepReadonly<Node>, gpu: DeepReadonly<Gpu>): GpuLabelSets {
    const pod = gpu.holder;
    const kept = this.labelSetsOf.get(gpu.uuid);
    const holder = pod === null ? undefined : `${pod.workload.namespace}/${pod.name}`;
    if (kept !== undefined && kept.holder === holder && kept.lastXid === gpu.lastXid) return kept;
    const labels: Record<string, string | undefined> = {
      gpu: String(gpu.index),
      UUID: gpu.uuid,
      pci_bus_id: gpu.pciBusId,
      device: `nvidia${gpu.index}`,
      modelName: pool.model.modelName,
      Hostname: node.name,
      DCGM_FI_DRIVER_VERSION: this.options.driverVersion,
      pod: pod?.name,
      namespace: pod?.workload.namespace,
      container: pod === null ? undefined : containerName(pod.workload.type, pod.workload.name),
    };
    const made: GpuLabelSets = {
      holder,
      lastXid: gpu.lastXid,
      shared: seriesLabels(DCGM.gpuUtil, labels),
      xid: seriesLabels(DCGM.xidErrors, { ...labels, err_code: String(gpu.lastXid), err_msg: xidMessage(gpu.lastXid) }),
    };
    this.labelSetsOf.set(gpu.uuid, made);
    return made;
  }

  private gpuSamples(out: TargetSeries, pool: DeepReadonly<Pool>, node: DeepReadonly<Node>, gpu: DeepReadonly<Gpu>, r: GpuReading): void {
    const { shared, xid: xidLabels } = this.labelSets(pool, node, gpu);
    const counterStart = gpu.initialisedAt;
    const add = (family: (typeof DCGM)[keyof typeof DCGM], value: number) =>
      out.add(family, family === DCGM.xidErrors ? xidLabels : shared, value, family.type === "counter" ? counterStart : undefined);
    add(DCGM.smClock, r.smClockMHz);
    add(DCGM.memClock, r.memClockMHz);
    add(DCGM.memoryTemp, r.memoryTempC);
    add(DCGM.gpuTemp, r.gpuTempC);
    add(DCGM.powerUsage, r.powerW);
    add(DCGM.totalEnergy, r.energyMj);
    add(DCGM.pcieReplay, 0);
    add(DCGM.gpuUtil, r.gpuUtil);
    add(DCGM.memCopyUtil, r.memCopyUtil);
    add(DCGM.encUtil, 0); // A100 and H100 have no NVENC (dcgm-exporter etc/default-counters.csv @4.5.3-4.8.2)
    add(DCGM.decUtil, 0);
    add(DCGM.xidErrors, gpu.lastXid);
    // In the counters file's order, after the XID field.
    if (this.powerViolation) add(DCGM.powerViolation, r.powerViolationNs);
    // The board model never reaches a thermal limit (the H200 capture: 0 us of thermal slowdown under its cap).
    if (this.thermalViolation) add(DCGM.thermalViolation, 0);
    add(DCGM.fbFree, r.fbFreeMiB);
    add(DCGM.fbUsed, r.fbUsedMiB);
    add(DCGM.fbReserved, r.fbReservedMiB);
    add(DCGM.vgpuLicense, 0); // not a vGPU: 0 = not licensed
    add(DCGM.uncorrectableRemappedRows, gpu.remappedRowsUncorrectable);
    add(DCGM.correctableRemappedRows, 0); // correctable errors are not simulated
    add(DCGM.rowRemapFailure, gpu.rowRemapFailed ? 1 : 0);
    add(DCGM.grEngineActive, r.grEngineActive);
    add(DCGM.tensorActive, r.tensorActive);
    add(DCGM.dramActive, r.dramActive);
    add(DCGM.pcieTx, r.pcieTxBytesPerSecond);
    add(DCGM.pcieRx, r.pcieRxBytesPerSecond);
  }
}
