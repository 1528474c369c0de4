/**
 * The Run:ai construct: the cluster's Run:ai metric families, computed from the same GPU
 * activity model as dcgm-exporter (Run:ai derives its GPU families from DCGM data), the same
 * containers as the kubelet's cAdvisor (cpu-memory.ts), the simulation's workloads, pods,
 * projects and queues. Per-workload series exist while the
 * workload does (pending or running); per-pod series while the pod runs.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import type { ClusterView, DeepReadonly, Gpu, Node, Pool, Workload } from "@gpusynth/sim";
import { systemPodIp } from "../addresses.js";
import {
  KeptLabelSets,
  listedTarget,
  type MetricConstruct,
  SharedLabelSets,
  type SubjectLabelSets,
  seriesLabels,
  type TargetSamples,
  TargetSeries,
} from "../catalogue.js";
import { BLUEPRINT_CALENDAR, type StampClock } from "../clock.js";
import type { GpuActivityModel, GpuWork } from "../gpu/activity.js";
import type { NodeContainers } from "../kubelet/containers.js";
import { cpuMemorySamples } from "./cpu-memory.js";
import { RUNAI, RUNAI_FAMILIES } from "./families.js";

const IDLE_WINDOW_MS = 30_000;

/** Run:ai's workload type label values (label dictionary: training / interactive / inference). */
function workloadType(w: DeepReadonly<Workload>): string {
  return w.type === "distributed-training" || w.type === "training" ? "training" : w.type;
}

/** Run:ai's metrics exporter: one for the cluster, the largest cluster-wide target (rank 0). */
export const RUNAI_PLACEMENT = { clusterWide: 0 } as const;

export class RunaiConstruct implements MetricConstruct {
  readonly area = "runai";
  readonly families = RUNAI_FAMILIES;
  readonly placement = RUNAI_PLACEMENT;
  /** Its series' label sets, kept with their subjects (a workload, a pod, a project, a node's CPU and memory); a node's GPUs' are in nodeSeriesOf. */
  private readonly kept = new KeptLabelSets();
  /** Its exporter's series, kept from one scrape to the next. */
  private readonly series = new TargetSeries();

  /** `clock` stamps the last-busy times on the run's time axis. */
  constructor(
    private readonly blueprint: Blueprint,
    private readonly activity: GpuActivityModel,
    /** The containers the kubelets run: what the CPU and memory families read. */
    private readonly containers: NodeContainers,
    private readonly clock: StampClock = BLUEPRINT_CALENDAR,
  ) {}

  collect(view: ClusterView): TargetSamples[] {
    const target = this.blueprint.telemetry.runai;
    if (target === undefined) return [];
    const clusterId = this.blueprint.cluster.clusterId;
    const out = this.series.begin();
    const unix = (t: number) => Math.floor(this.clock(view.startMs + t) / 1000);
    const readings = new Map<DeepReadonly<Gpu>, GpuWork>();
    const kept = this.kept;
    kept.startCollect();

    for (const pool of view.pools) this.nodeSamples(out, pool, view.now, clusterId, readings, unix);

    const projectGpus = new Map<string, { allocated: number; utilSum: number }>();
    for (const w of [...view.pending, ...view.running]) {
      const gpus = gpusOf(w);
      const measured = gpus.map((g) => readings.get(g)).filter((r): r is GpuWork => r !== undefined);
      const util = measured.length === 0 ? 0 : measured.reduce((sum, r) => sum + r.gpuUtil, 0) / measured.length;
      const ranMs = w.ranMs + (w.runningSince === null ? 0 : view.now - w.runningSince);
      const lastBusy = gpus.reduce<number | null>((last, g) => {
        const busy = this.activity.lastBusyAt(g, view.now);
        return busy === null || (last !== null && last >= busy) ? last : busy;
      }, null);
      const since = lastBusy ?? w.runningSince ?? view.now;
      const labels = {
        clusterId,
        workload_id: w.uid,
        workload_name: w.name,
        workload_type: workloadType(w),
        user: w.user,
        project: w.project,
      };
      // Its series' label sets, looked up once for its nine families (the workload's object is
      // their subject: it lives as long as the workload).
      const workload = kept.subject(w);
      kept.addIn(out, workload, RUNAI.requestedGpusPerWorkload, labels, w.gpus);
      kept.addIn(
        out,
        workload,
        RUNAI.requestedGpuMemoryPerWorkload,
        { clusterId, job_type: workloadType(w), job_uuid: w.uid, job_name: w.name, project: w.project, workload_id: w.uid },
        0,
      );
      kept.addIn(out, workload, RUNAI.runTimePerWorkload, labels, Math.floor(ranMs / 1000));
      kept.addIn(out, workload, RUNAI.waitTimePerWorkload, labels, Math.floor((view.now - w.submittedAt - ranMs) / 1000));
      if (w.phase !== "Running") continue;
      kept.addIn(out, workload, RUNAI.allocatedPerWorkload, labels, gpus.length);
      kept.addIn(
        out,
        workload,
        RUNAI.gpuMemoryUsedPerWorkload,
        labels,
        measured.reduce((sum, r) => sum + r.fbUsedMiB, 0),
      );
      kept.addIn(out, workload, RUNAI.gpuUtilizationPerWorkload, labels, Math.round(util * 100) / 100);
      kept.addIn(out, workload, RUNAI.lastUtilizationTimePerWorkload, labels, lastBusy === null ? 0 : unix(lastBusy));
      // Idleness accumulates in 30-second windows (NVIDIA Run:ai "Scheduling Rules").
      kept.addIn(
        out,
        workload,
        RUNAI.gpuIdleSecondsPerWorkload,
        labels,
        Math.floor((view.now - since) / IDLE_WINDOW_MS) * (IDLE_WINDOW_MS / 1000),
      );
      const project = projectGpus.get(w.project) ?? { allocated: 0, utilSum: 0 };
      project.allocated += gpus.length;
      project.utilSum += util * gpus.length;
      projectGpus.set(w.project, project);
      for (const pod of w.pods) {
        const podLabels = { clusterId, pod_name: pod.name, pod_uuid: pod.uid, pod_namespace: w.namespace, node: pod.node.name };
        kept.addIn(out, kept.subject(pod), RUNAI.allocatedPerPod, podLabels, pod.gpus.length);
        // Each of the pod's GPUs is a subject by its place among them: a pod keeps its GPUs.
        const podGpus = kept.partsOf(pod, pod.gpus.length);
        for (let i = 0; i < pod.gpus.length; i++) {
          const gpu = pod.gpus[i] as DeepReadonly<Gpu>;
          const r = readings.get(gpu);
          if (r === undefined) continue;
          const podGpu = podGpus[i] as SubjectLabelSets;
          const gpuLabels = { ...podLabels, gpu: String(gpu.index) };
          kept.addIn(out, podGpu, RUNAI.gpuUtilizationPerPodPerGpu, gpuLabels, r.gpuUtil);
          kept.addIn(out, podGpu, RUNAI.gpuMemoryUsedPerPodPerGpu, gpuLabels, r.fbUsedMiB);
        }
      }
    }

    for (const project of this.blueprint.projects) {
      const deserved = Object.values(project.nodePools).reduce((sum, q) => sum + q.deserved, 0);
      const used = projectGpus.get(project.name);
      // The blueprint's project is its series' subject, its node pools' queues parts of it.
      const projectSets = kept.subject(project);
      kept.addIn(out, projectSets, RUNAI.projectGuaranteedGpus, { clusterId, project: project.name }, deserved);
      kept.addIn(
        out,
        projectSets,
        RUNAI.projectInfo,
        { clusterId, project: project.name, department: project.department, gpu_guaranteed_quota: String(deserved) },
        1,
      );
      kept.addIn(out, projectSets, RUNAI.allocatedPerProject, { clusterId, project: project.name }, used?.allocated ?? 0);
      kept.addIn(
        out,
        projectSets,
        RUNAI.gpuUtilizationPerProject,
        { clusterId, project: project.name },
        used === undefined || used.allocated === 0 ? 0 : Math.round((used.utilSum / used.allocated) * 100) / 100,
      );
      const pools = Object.entries(project.nodePools);
      const queues = kept.partsOf(project, pools.length);
      for (let i = 0; i < pools.length; i++) {
        const [pool, quota] = pools[i] as (typeof pools)[number];
        kept.addIn(
          out,
          queues[i] as SubjectLabelSets,
          RUNAI.queueInfo,
          {
            clusterId,
            nodepool: pool,
            queue_name: project.name,
            department: project.department,
            gpu_guaranteed_quota: String(quota.deserved),
          },
          1,
        );
      }
    }
    cpuMemorySamples(out, view, clusterId, this.containers, kept);
    return [listedTarget({ job: target.job, host: systemPodIp(`runai/${target.job}`), port: target.port, path: target.path }, out.end())];
  }

  /** A node's series label sets, made the first time it is collected: its name and GPUs never change. */
  private nodeSeriesOf(node: DeepReadonly<Node>, clusterId: string): NodeSeries {
    let series = this.nodeSeries.get(node);
    if (series === undefined) {
      // A GPU's five families carry the same labels (two in one order, three in another), and the
      // node's own five theirs: a label set for each.
      const shared = new SharedLabelSets();
      const labels = { clusterId, node: node.name };
      series = {
        gpus: node.gpus.map((gpu): GpuSeries => {
          const gpuLabels = { ...labels, gpu: String(gpu.index) };
          return {
            allocated: shared.of(RUNAI.allocatedPerGpu, gpuLabels),
            lastUtilization: shared.of(RUNAI.lastUtilizationTimePerGpu, gpuLabels),
            utilization: shared.of(RUNAI.gpuUtilizationPerGpu, gpuLabels),
            memoryUsed: shared.of(RUNAI.gpuMemoryUsedPerGpu, gpuLabels),
            memoryTotal: shared.of(RUNAI.gpuMemoryTotalPerGpu, gpuLabels),
          };
        }),
        utilization: shared.of(RUNAI.gpuUtilizationPerNode, labels),
        memoryUsed: shared.of(RUNAI.gpuMemoryUsedPerNode, labels),
        memoryTotal: shared.of(RUNAI.gpuMemoryTotalPerNode, labels),
        allocated: shared.of(RUNAI.allocatedPerNode, labels),
        mig: shared.of(RUNAI.migModeGpuCount, labels),
        counts: new Map(),
      };
      this.nodeSeries.set(node, series);
    }
    return series;
  }
  /** Each node's series label sets (nodeSeriesOf), for the node's life. */
  private readonly nodeSeries = new WeakMap<DeepReadonly<Node>, NodeSeries>();

  private nodeSamples(
    out: TargetSeries,
    pool: DeepReadonly<Pool>,
    now: number,
    clusterId: string,
    readings: Map<DeepReadonly<Gpu>, GpuWork>,
    unix: (t: number) => number,
  ): void {
    for (const node of pool.nodes) {
      const series = this.nodeSeriesOf(node, clusterId);
      let reporting = 0;
      let utilSum = 0;
      let used = 0;
      let allocated = 0;
      // A rebooting node's GPUs report nothing.
      const gpus = node.status === "rebooting" ? 0 : node.gpus.length;
      for (let i = 0; i < gpus; i++) {
        const gpu = node.gpus[i] as DeepReadonly<Gpu>;
        if (gpu.health !== "ok") continue;
        reporting++;
        const r = this.activity.readWork(gpu, pool.model, now);
        readings.set(gpu, r);
        const sets = series.gpus[i] as GpuSeries;
        const held = gpu.holder === null ? 0 : 1;
        const lastBusy = this.activity.lastBusyAt(gpu, now);
        out.add(RUNAI.allocatedPerGpu, sets.allocated, held);
        out.add(RUNAI.lastUtilizationTimePerGpu, sets.lastUtilization, lastBusy === null ? 0 : unix(lastBusy));
        out.add(RUNAI.gpuUtilizationPerGpu, sets.utilization, r.gpuUtil);
        out.add(RUNAI.gpuMemoryUsedPerGpu, sets.memoryUsed, r.fbUsedMiB);
        out.add(RUNAI.gpuMemoryTotalPerGpu, sets.memoryTotal, pool.model.framebufferMiB);
        utilSum += r.gpuUtil;
        used += r.fbUsedMiB;
        allocated += held;
      }
      out.add(RUNAI.gpuUtilizationPerNode, series.utilization, reporting === 0 ? 0 : Math.round((utilSum / reporting) * 100) / 100);
      out.add(RUNAI.gpuMemoryUsedPerNode, series.memoryUsed, used);
      out.add(RUNAI.gpuMemoryTotalPerNode, series.memoryTotal, reporting * pool.model.framebufferMiB);
      const ready = String(node.status !== "rebooting");
      const schedulable = String(node.status === "ready");
      // Its label set changes with the node's readiness: one kept for each it has had.
      const readiness = `${ready}/${schedulable}`;
      let count = series.counts.get(readiness);
      if (count === undefined) {
        count = seriesLabels(RUNAI.gpuCountPerNode, { clusterId, node: node.name, modelName: pool.model.modelName, ready, schedulable });
        series.counts.set(readiness, count);
      }
      out.add(RUNAI.gpuCountPerNode, count, reporting);
      out.add(RUNAI.allocatedPerNode, series.allocated, allocated);
      out.add(RUNAI.migModeGpuCount, series.mig, 0);
    }
  }
}

/**
 * A workload's GPUs, its pods' in order. A loop, not flatMap: Node 20's flatMap costs about half a
 * microsecond a call and 0.2 µs an element, and this runs for every workload at every scrape.
 */
function gpusOf(w: { readonly pods: readonly { readonly gpus: readonly DeepReadonly<Gpu>[] }[] }): DeepReadonly<Gpu>[] {
  const gpus: DeepReadonly<Gpu>[] = [];
  for (const pod of w.pods) for (const gpu of pod.gpus) gpus.push(gpu);
  return gpus;
}

type Labels = Readonly<Record<string, string>>;

/** A GPU's series label sets, one per family. */
interface GpuSeries {
  readonly allocated: Labels;
  readonly lastUtilization: Labels;
  readonly utilization: Labels;
  readonly memoryUsed: Labels;
  readonly memoryTotal: Labels;
}

/** A node's series label sets (RunaiConstruct.nodeSeriesOf): its GPUs', by index, and its own. */
interface NodeSeries {
  readonly gpus: readonly GpuSeries[];
  readonly utilization: Labels;
  readonly memoryUsed: Labels;
  readonly memoryTotal: Labels;
  readonly allocated: Labels;
  readonly mig: Labels;
  /** The GPU count's label set for each readiness (ready/schedulable) the node has had. */
  readonly counts: Map<string, Labels>;
}
