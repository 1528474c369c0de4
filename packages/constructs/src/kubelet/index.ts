/**
 * The kubelet on every node, two targets as kube-prometheus' kubelet ServiceMonitor scrapes it
 * (job `kubelet`): its cAdvisor endpoint (/metrics/cadvisor), each running container's cgroup and
 * each pod's, with the CPU and memory the usage model gives them (usage.ts) and the cgroup
 * settings the kubelet derives from the pod's resources; and its own /metrics, the pods and
 * containers it runs and the pods it evicted (families.ts KUBELET_OWN).
 */
import type { Blueprint } from "@gpusynth/blueprint";
import type { ClusterView } from "@gpusynth/sim";
import {
  KeptByKey,
  KeptLabelSets,
  type KubernetesEndpoint,
  listedTarget,
  type MetricConstruct,
  type MetricFamily,
  type ScrapeTarget,
  SeriesByTarget,
  type Share,
  seriesLabels,
  type TargetSamples,
  type TargetSeries,
} from "../catalogue.js";
import { BLUEPRINT_CALENDAR, type StampClock } from "../clock.js";
import { containerCgroupPath, type NodeContainer, NodeContainers, type PodCgroup, podCgroupPath } from "./containers.js";
import { CADVISOR, KUBELET_FAMILIES, KUBELET_OWN } from "./families.js";
import type { ImagePulls } from "./image-pulls.js";
import { type CfsCounters, cpuSeconds, memoryUse, starvedCfs, workingSet } from "./usage.js";

/** The kubelet's secure port (--port default 10250) and the path cAdvisor's families are served at (server.go cadvisorMetricsPath). */
export const KUBELET_PORT = 10250;
export const CADVISOR_PATH = "/metrics/cadvisor";
/** The kubelet's own families (server.go's default metrics path). */
export const KUBELET_METRICS_PATH = "/metrics";
/** kube-prometheus' kubelet ServiceMonitor: the job is the kubelet Service's name. */
export const KUBELET_JOB = "kubelet";

/** The CFS period the kubelet leaves at the kernel's default (100 ms, in µs). */
const CPU_PERIOD_US = 100_000;
/** cgroup v1's and the kubelet's bounds on CPU shares (cm/helpers_linux.go MinShares, MaxShares). */
const MIN_SHARES = 2;
const MAX_SHARES = 262_144;
/** cAdvisor splits nothing itself: the kernel's user and system time. A modelling choice (cantfind.md kubelet.container-usage-levels). */
const USER_SHARE = 0.85;

/**
 * The CPU shares cAdvisor reports for a CPU request: the kubelet's MilliCPUToShares, written as
 * cgroup v2's cpu.weight (cgroup_manager_linux.go CpuSharesToCpuWeight) and read back by
 * cAdvisor (container/common/helpers.go convertCPUWeightToCPULimit): the round trip loses a
 * little, as on a real cgroup v2 node.
 */
export function reportedShares(cpuMilli: number): number {
  const shares = cpuMilli === 0 ? MIN_SHARES : Math.min(MAX_SHARES, Math.max(MIN_SHARES, Math.floor((cpuMilli * 1024) / 1000)));
  const weight = Math.floor(((shares - 2) * 9999) / 262_142) + 1;
  return Math.floor(((weight - 1) * 262_142) / 9999) + 2;
}

/** A cgroup's series labels: the same for every family but the CPU usage's, which adds `cpu`. */
interface CgroupLabels {
  readonly base: Readonly<Record<string, string>>;
  readonly withCpu: Readonly<Record<string, string>>;
}

/** The series labels of a cgroup's raw labels (ordered, empty values dropped), made once. */
function cgroupLabels(raw: Readonly<Record<string, string>>): CgroupLabels {
  return { base: seriesLabels(CADVISOR.startTime, raw), withCpu: seriesLabels(CADVISOR.cpuUsage, { ...raw, cpu: "total" }) };
}

/** The CFS quota of a CPU limit: the kubelet's MilliCPUToQuota (cm/helpers_linux.go), at least 1 ms a period. */
export function cpuQuota(cpuLimitMilli: number): number {
  return Math.max(1000, Math.floor((cpuLimitMilli * CPU_PERIOD_US) / 1000));
}

/** A pod's CFS counters from its containers': their periods, none throttled at the pod's level. */
function podCfs(members: readonly Cgroup[]): CfsCounters | undefined {
  let periods: number | undefined;
  for (const c of members) if (c.cfs !== undefined) periods = Math.max(periods ?? c.cfs.periods, c.cfs.periods);
  return periods === undefined ? undefined : { periods, throttledPeriods: 0, throttledSeconds: 0 };
}

interface Cgroup {
  readonly labels: CgroupLabels;
  /**
   * What its unchanging families' samples are kept by: the container's record, or its pod's
   * record (made again when one of the pod's containers restarts, and with it the pod's sums).
   */
  readonly record: object;
  readonly cpuMilli: number;
  /** CPU limit (millicores; 0: none). */
  readonly cpuLimitMilli: number;
  readonly memoryLimitBytes: number;
  readonly startMs: number;
  readonly cpuSeconds: number;
  readonly rss: number;
  readonly cache: number;
  /** Its CFS counters, where gpusynth models them (a container held at its limit: usage.ts starvedCfs). */
  readonly cfs: CfsCounters | undefined;
}

export class KubeletConstruct implements MetricConstruct {
  readonly area = "kubelet";
  readonly families = KUBELET_FAMILIES;
  /** The kubelet runs on every node. */
  readonly placement = { perNode: true } as const;
  readonly containers: NodeContainers;
  private readonly targets = new Map<string, ScrapeTarget>();

  constructor(
    blueprint: Blueprint,
    pulls: ImagePulls,
    private readonly clock: StampClock = BLUEPRINT_CALENDAR,
  ) {
    this.containers = new NodeContainers(blueprint, pulls);
  }

  collect(view: ClusterView, share?: Share): TargetSamples[] {
    const result: TargetSamples[] = [];
    const seconds = (t: number) => this.clock(view.startMs + t) / 1000;
    this.ownLabels.startCollect();
    this.podLabelSets.startCollect();
    for (const pool of view.pools)
      for (const node of pool.nodes) {
        if (node.status === "rebooting" || (share !== undefined && !share.ownsNode(node.name))) continue;
        const containers = this.containers.on(node.name, view.now);
        const cgroups = this.cgroups(containers, view.now);
        const cadvisorTarget = this.target(node.name, CADVISOR_PATH);
        const cadvisor = this.series.begin(cadvisorTarget);
        this.samples(cadvisor, cgroups, Math.floor(seconds(view.now)), seconds);
        result.push(listedTarget(cadvisorTarget, cadvisor.end()));
        const ownTarget = this.target(node.name, KUBELET_METRICS_PATH);
        const own = this.series.begin(ownTarget);
        this.ownSamples(own, node.name, containers.length);
        result.push(listedTarget(ownTarget, own.end()));
      }
    return result;
  }

  /**
   * The kubelet's own families: its PLEG counts the running containers and the pods whose sandbox
   * runs (pleg/generic.go updateRunningPodAndContainerMetrics; the exited and created containers
   * the runtime still holds are not modelled: cantfind.md kubelet.metrics-sets), and its eviction
   * manager counts evictions by signal once it has evicted (eviction_manager.go: memory.available
   * is the only signal gpusynth's pressure crosses).
   */
  private ownSamples(out: TargetSeries, node: string, runningContainers: number): void {
    const kept = this.ownLabels;
    const evictions = this.containers.evictionsOn(node);
    if (evictions > 0) kept.add(out, node, KUBELET_OWN.evictions, { eviction_signal: "memory.available" }, evictions);
    kept.add(out, node, KUBELET_OWN.nodeName, { node }, 1);
    kept.add(out, node, KUBELET_OWN.runningContainers, { container_state: "running" }, runningContainers);
    kept.add(out, node, KUBELET_OWN.runningPods, {}, this.containers.runningPods(node));
  }
  /** The own families' label sets, kept per node while it is collected. */
  private readonly ownLabels = new KeptLabelSets();

  /** Each container's cgroup, then each pod's (the sum of its containers'). */
  private cgroups(containers: readonly NodeContainer[], now: number): Cgroup[] {
    const out: Cgroup[] = [];
    const pods = new Map<string, { pod: PodCgroup; members: Cgroup[] }>();
    for (const c of containers) {
      const memory = memoryUse(c.usage, now);
      const cgroup: Cgroup = {
        labels: this.containerLabels(c),
        record: c,
        cpuMilli: c.cpuRequestMilli,
        cpuLimitMilli: c.cpuLimitMilli,
        memoryLimitBytes: c.memoryLimitBytes,
        startMs: c.usage.from,
        cpuSeconds: cpuSeconds(c.usage, now),
        rss: memory.rss,
        cache: memory.cache,
        cfs: starvedCfs(c.usage, now),
      };
      out.push(cgroup);
      const pod = pods.get(c.pod.uid);
      if (pod === undefined) pods.set(c.pod.uid, { pod: c.pod, members: [cgroup] });
      else pod.members.push(cgroup);
    }
    for (const { pod, members } of pods.values()) {
      // The pod's sums, each from zero in its containers' order, in one pass.
      let cpuMilli = 0;
      let cpuLimitMilli = 0;
      let memoryLimitBytes = 0;
      let everyCpuLimit = true;
      let everyMemoryLimit = true;
      let startMs = Number.POSITIVE_INFINITY;
      let cpu = 0;
      let rss = 0;
      let cache = 0;
      for (const c of members) {
        cpuMilli += c.cpuMilli;
        cpuLimitMilli += c.cpuLimitMilli;
        memoryLimitBytes += c.memoryLimitBytes;
        everyCpuLimit &&= c.cpuLimitMilli > 0;
        everyMemoryLimit &&= c.memoryLimitBytes > 0;
        startMs = Math.min(startMs, c.startMs);
        cpu += c.cpuSeconds;
        rss += c.rss;
        cache += c.cache;
      }
      out.push({
        labels: this.podLabels(pod),
        record: pod,
        cpuMilli,
        // A pod's cgroup has a CPU quota only when every container has a limit (their sum).
        cpuLimitMilli: everyCpuLimit ? cpuLimitMilli : 0,
        // A pod limits memory only when every container does (the pod's cgroup: their sum).
        memoryLimitBytes: everyMemoryLimit ? memoryLimitBytes : 0,
        startMs,
        cpuSeconds: cpu,
        rss,
        cache,
        // The pod's quota is its container's: the container's own runs out first, so the pod's
        // cgroup counts the same periods and is not throttled itself.
        cfs: podCfs(members),
      });
    }
    return out;
  }

  /** A cgroup's labels, made once while it exists (they never change). */
  private containerLabels(c: NodeContainer): CgroupLabels {
    let labels = this.labelsOf.get(c);
    if (labels === undefined) {
      labels = cgroupLabels({
        container: c.container,
        id: containerCgroupPath(c),
        image: c.image,
        name: c.id,
        namespace: c.pod.namespace,
        pod: c.pod.name,
      });
      this.labelsOf.set(c, labels);
    }
    return labels;
  }
  /**
   * A pod's cgroup's labels, by its UID: the pod's cgroup outlives its containers, and a container
   * that restarts comes back with a new record of its pod (NodeContainers), not a new pod.
   */
  private podLabels(pod: PodCgroup): CgroupLabels {
    // The kubelet looks the pod up by its cgroup (GetPodByCgroupfs): pod and namespace, no container.
    return this.podLabelSets.get(pod.uid, () => cgroupLabels({ id: podCgroupPath(pod), namespace: pod.namespace, pod: pod.name }));
  }
  /** The pods' cgroup labels, by UID, kept while collects meet the pod. */
  private readonly podLabelSets = new KeptByKey<CgroupLabels>();
  /** The containers' cgroup labels, by container. */
  private readonly labelsOf = new WeakMap<NodeContainer, CgroupLabels>();
  /** Per cgroup (by its record): the values of its families that never change while the record lives (null: no series). */
  private readonly keptOf = new WeakMap<object, Map<MetricFamily, number | null>>();
  /** Each node's two endpoints' series, kept from one scrape to the next. */
  private readonly series = new SeriesByTarget();

  private samples(samples: TargetSeries, cgroups: readonly Cgroup[], nowSeconds: number, seconds: (t: number) => number): void {
    const each = (family: MetricFamily, value: (c: Cgroup) => number | undefined) => {
      const counter = family.type === "counter";
      for (const c of cgroups) {
        const v = value(c);
        if (v === undefined) continue;
        // The labels were made series labels once (cgroupLabels); a counter counts from its cgroup's creation.
        samples.add(family, family === CADVISOR.cpuUsage ? c.labels.withCpu : c.labels.base, v, counter ? c.startMs : undefined);
      }
    };
    // Each cgroup's kept samples, looked up once for the families that keep theirs.
    const keptOf = cgroups.map((c) => {
      let made = this.keptOf.get(c.record);
      if (made === undefined) {
        made = new Map();
        this.keptOf.set(c.record, made);
      }
      return made;
    });
    /** A family whose value never changes while the cgroup exists: its value is worked out once and kept. */
    const kept = (family: MetricFamily, value: (c: Cgroup) => number | undefined) => {
      for (let i = 0; i < cgroups.length; i++) {
        const c = cgroups[i] as Cgroup;
        const made = keptOf[i] as Map<MetricFamily, number | null>;
        let v = made.get(family);
        if (v === undefined) {
          v = value(c) ?? null;
          made.set(family, v);
        }
        if (v !== null) samples.add(family, c.labels.base, v);
      }
    };
    // Family by family, in the order client_golang writes them (families.ts).
    each(CADVISOR.cfsPeriods, (c) => c.cfs?.periods);
    each(CADVISOR.cfsThrottledPeriods, (c) => c.cfs?.throttledPeriods);
    each(CADVISOR.cfsThrottledSeconds, (c) => c.cfs?.throttledSeconds);
    each(CADVISOR.cpuSystem, (c) => c.cpuSeconds * (1 - USER_SHARE));
    // prometheus.go: without per-CPU usage, one series cpu="total", written once it is above zero.
    each(CADVISOR.cpuUsage, (c) => (c.cpuSeconds > 0 ? c.cpuSeconds : undefined));
    each(CADVISOR.cpuUser, (c) => c.cpuSeconds * USER_SHARE);
    each(CADVISOR.lastSeen, () => nowSeconds);
    each(CADVISOR.memoryCache, (c) => c.cache);
    each(CADVISOR.memoryRss, (c) => c.rss);
    kept(CADVISOR.memorySwap, () => 0);
    each(CADVISOR.memoryUsage, (c) => c.rss + c.cache);
    each(CADVISOR.memoryWorkingSet, (c) => workingSet(c));
    kept(CADVISOR.specCpuPeriod, () => CPU_PERIOD_US);
    // prometheus.go writes the quota only where one is set (Cpu.Quota != 0).
    kept(CADVISOR.specCpuQuota, (c) => (c.cpuLimitMilli === 0 ? undefined : cpuQuota(c.cpuLimitMilli)));
    kept(CADVISOR.specCpuShares, (c) => reportedShares(c.cpuMilli));
    kept(CADVISOR.specMemoryLimit, (c) => c.memoryLimitBytes);
    kept(CADVISOR.startTime, (c) => Math.floor(seconds(c.startMs)));
  }

  /** A node's kubelet at `path`: both endpoints on the kubelet's port, told apart by path. */
  private target(node: string, path: string): ScrapeTarget {
    const key = `${node}${path}`;
    let target = this.targets.get(key);
    if (target === undefined) {
      // `metrics_path` as kube-prometheus' ServiceMonitor labels each endpoint: without it the two
      // targets' `up` and scrape series would be one series written twice.
      target = {
        job: KUBELET_JOB,
        host: node,
        port: KUBELET_PORT,
        path,
        node,
        kubernetes: KUBELET_ENDPOINT,
        labels: { metrics_path: path },
      };
      this.targets.set(key, target);
    }
    return target;
  }
}

/**
 * The kubelet as kube-prometheus finds it: the `kubelet` Service in kube-system that the
 * Prometheus Operator keeps (kube-prometheus runs it with --kubelet-service=kube-system/kubelet),
 * whose endpoints are the nodes' addresses with a Node target on the port `https-metrics`
 * (prometheus-operator pkg/kubelet/controller.go @v0.93.0, f8fafd47: syncService, the endpoint
 * addresses' NodeName and TargetRef; labels from pkg/operator/kubernetes.go).
 */
const KUBELET_ENDPOINT: KubernetesEndpoint = {
  namespace: "kube-system",
  service: "kubelet",
  serviceLabels: { "app.kubernetes.io/managed-by": "prometheus-operator", "app.kubernetes.io/name": "kubelet", "k8s-app": "kubelet" },
  portName: "https-metrics",
  address: { node: true },
};
