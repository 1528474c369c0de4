/**
 * The kube-state-metrics construct: pods (pending, running, and finished until deleted) and
 * nodes of the simulated cluster, as one KSM instance exposes them — or, sharded
 * (telemetry.kubeStateMetrics.shards), as each of its instances exposes the objects whose UID
 * hashes to it (sharding.ts), each a target of its own. Deployed with
 * --metric-labels-allowlist=pods=[project,runai/queue,user],nodes=[<node-pool label key>,
 * nvidia.com/gpu.product,nvidia.com/gpu.count] so pods and nodes can be joined to projects
 * and node pools (without an allowlist kube_*_labels carries no label_* keys).
 */
import type { Blueprint } from "@gpusynth/blueprint";
import {
  type ClusterView,
  type DeepReadonly,
  type DomainEvent,
  KUBELET_MAX_PODS,
  type Node,
  nodeResources,
  type Pool,
  projectNamespace,
  type Workload,
} from "@gpusynth/sim";
import { nodeInternalIp, nodeOrdinal, PodIpam, podCidr } from "../addresses.js";
import {
  KeptLabelSets,
  listedTarget,
  type MetricConstruct,
  type MetricFamily,
  type SeriesColumns,
  type Share,
  SharedLabelSets,
  type TargetSamples,
  TargetSeries,
} from "../catalogue.js";
import { BLUEPRINT_CALENDAR, type StampClock } from "../clock.js";
import type { ImagePulls } from "../kubelet/image-pulls.js";
import { containerName, podController } from "../naming.js";
import { stableHex, stableUuid } from "../noise.js";
import { type SystemPod, systemNamespaces, systemOf, systemPodsOf } from "../system-workloads.js";
import { KSM, KSM_FAMILIES, ksmLabelName } from "./families.js";
import { KsmSelfMetrics } from "./self-metrics.js";
import { objectUid, shardOfUid, UidShards } from "./sharding.js";
import { SystemWorkloadSamples } from "./system-samples.js";
import { CONDITION_STATUSES, imageId, PHASES, POD_STATUS_REASONS } from "./values.js";

export interface KubeStateMetricsOptions {
  readonly job: string;
  readonly port: number;
  /** Where it serves its own metrics. */
  readonly telemetryPort: number;
  /** kubelet default --max-pods. */
  readonly maxPodsPerNode: number;
}

export const KUBE_STATE_METRICS_DEFAULTS: KubeStateMetricsOptions = {
  job: "kube-state-metrics", // the Service name of the kube-state-metrics Helm chart and manifests
  port: 8080, // --port default (pkg/options/options.go)
  telemetryPort: 8081, // --telemetry-port default (pkg/options/options.go)
  maxPodsPerNode: KUBELET_MAX_PODS,
};

/** The node conditions the kubelet posts (pkg/kubelet/nodestatus/setters.go). */
const NODE_CONDITIONS = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"] as const;
/** The resources a node's capacity and allocatable list, with their units, in kube-state-metrics' order. */
const NODE_RESOURCES = [
  ["cpu", "core"],
  ["memory", "byte"],
  ["pods", "integer"],
  ["nvidia_com_gpu", "integer"],
] as const;

type Labels = Readonly<Record<string, string>>;

/** A node's series label sets (nodeSeriesOf), its ordinal, and the instance (shard) that lists it. */
interface NodeSeries {
  /** The node's place in the cluster (addresses.ts nodeOrdinal). */
  readonly ordinal: number;
  readonly shard: number;
  readonly info: Labels;
  readonly labels: Labels;
  readonly roles: readonly Labels[];
  /** Per NODE_RESOURCES entry. */
  readonly capacity: readonly Labels[];
  readonly allocatable: readonly Labels[];
  /** Per condition of NODE_CONDITIONS, per status of CONDITION_STATUSES. */
  readonly conditions: readonly Labels[];
  readonly unschedulable: Labels;
}
const MS_PER_S = 1000;
/** kube_namespace_status_phase's two series per namespace (namespace.go: NamespaceActive, NamespaceTerminating). */
const NAMESPACE_PHASES = ["Active", "Terminating"] as const;

/** What a pod's series are made from, besides its workload, uid and creation (fixed for its life). */
interface PodState {
  readonly phase: (typeof PHASES)[number];
  readonly node?: DeepReadonly<Node>;
  readonly startedAt?: number;
  readonly scheduled?: boolean;
  readonly reason?: string;
  readonly gpus: number;
  /** Container statuses exist once the pod is bound: restartCount and, after a restart, why it last ended. */
  readonly restarts?: number;
  /** The failed container waits out the kubelet's back-off. */
  readonly crashLooping?: boolean;
  /** The container waits for its image to be pulled: it has not started yet. */
  readonly creating?: boolean;
  /** status.reason, e.g. Evicted. */
  readonly statusReason?: string;
}

const stateKey = (s: PodState): string =>
  `${s.phase}|${s.node?.name ?? ""}|${s.startedAt ?? ""}|${s.scheduled ?? ""}|${s.reason ?? ""}|${s.gpus}|${s.restarts ?? ""}|${s.crashLooping ?? ""}|${s.creating ?? ""}|${s.statusReason ?? ""}`;

export class KubeStateMetricsConstruct implements MetricConstruct {
  readonly area = "kube-state-metrics";
  readonly families = KSM_FAMILIES;
  /**
   * The second largest cluster-wide target, from rank 1: one instance, or one rank per shard
   * (shard.ts spreads them over the run's shards).
   */
  readonly placement: { readonly clusterWide: number; readonly instances: number };
  /**
   * Each pod's series from the last collect, by uid, with the state they were made from: a pod
   * whose state has not changed since (most pods, most of the time) is not worked out again.
   */
  private pods = new Map<string, { readonly key: string; readonly series: SeriesColumns }>();

  /** Each pod's IP, as its node's IPAM handed it out; fed the simulation's events (record). */
  private readonly podIps: PodIpam;
  /** The cluster's system workloads (kube-system, the GPU Operator, KAI) and their pods. */
  private readonly system: SystemWorkloadSamples;
  private readonly systemNamespaces: readonly string[];
  /** Each instance's pod (its address is the instance's scrape target) and its own metrics (its telemetry port). */
  private readonly instances: ReadonlyArray<{ readonly pod: SystemPod; readonly self: KsmSelfMetrics }>;
  /** Each instance's series, kept from one scrape to the next. */
  private readonly series: readonly TargetSeries[];
  /** Each pod's shard, by UID. */
  private readonly podShards: UidShards;
  /** Each node's and namespace's shard, by name (their UIDs are fixed by their names). */
  private readonly namedShards = new Map<string, number>();
  /** The namespaces' and the nodes' taints' series label sets, kept while the namespace or taint is collected. */
  private readonly kept = new KeptLabelSets();

  /** `clock` stamps kube_pod_created and kube_pod_start_time on the run's time axis. */
  constructor(
    blueprint: Blueprint,
    private readonly clock: StampClock = BLUEPRINT_CALENDAR,
    /** When each container starts: until then it waits in ContainerCreating. */
    private readonly pulls: ImagePulls,
    private readonly options: KubeStateMetricsOptions = KUBE_STATE_METRICS_DEFAULTS,
  ) {
    this.podIps = new PodIpam(blueprint);
    const system = systemOf(blueprint);
    const pods = systemPodsOf(blueprint, "kube-state-metrics");
    this.instances = pods.map((pod, ordinal) => ({ pod, self: new KsmSelfMetrics(pod, { ordinal, total: pods.length }) }));
    this.series = pods.map(() => new TargetSeries());
    this.placement = { clusterWide: 1, instances: pods.length };
    this.podShards = new UidShards(pods.length);
    this.system = new SystemWorkloadSamples(system, (uid) => shardOfUid(uid, pods.length));
    this.systemNamespaces = systemNamespaces(system);
  }

  /** Feeds a domain event to the pods' IP allocation and the system pods' restarts; subscribe it to the simulation. */
  readonly record = (event: DomainEvent): void => {
    this.podIps.record(event);
    this.system.record(event);
    for (const instance of this.instances) instance.self.record(event);
  };

  /** The shard of a node or namespace (`kind`), whose UID its name fixes. */
  private shardOfNamed(kind: "Node" | "Namespace", name: string): number {
    const total = this.instances.length;
    if (total === 1) return 0;
    const key = `${kind}/${name}`;
    let shard = this.namedShards.get(key);
    if (shard === undefined) {
      shard = shardOfUid(objectUid(kind, "", name), total);
      this.namedShards.set(key, shard);
    }
    return shard;
  }

  /** The instances `share` owns (all without one), each with the list its objects' samples go into. */
  collect(view: ClusterView, share?: Share): TargetSamples[] {
    const { clusterWide } = this.placement;
    const served = this.instances.map((_, i) =>
      share === undefined || share.ownsClusterWide(clusterWide + i) ? (this.series[i] as TargetSeries).begin() : undefined,
    );
    if (served.every((out) => out === undefined)) return [];
    const seconds = (t: number) => this.clock(view.startMs + t) / MS_PER_S;

    this.kept.startCollect();
    this.podShards.startCollect();
    for (const pool of view.pools)
      for (const node of pool.nodes) {
        const series = this.nodeSeriesOf(view.pools, pool, node);
        const out = served[series.shard];
        if (out !== undefined) this.nodeSamples(out, node, series);
      }
    this.system.collect(view, seconds, served);

    const previous = this.pods;
    const current = new Map<string, { readonly key: string; readonly series: SeriesColumns }>();
    this.pods = current;
    const podSamples = (w: DeepReadonly<Workload>, pod: { name: string; uid: string; createdAt: number }, state: PodState) => {
      const out = served[this.podShards.of(pod.uid)];
      if (out === undefined) return;
      const key = stateKey(state);
      let made = previous.get(pod.uid);
      if (made === undefined || made.key !== key) made = { key, series: podSeries(w, pod, state) };
      current.set(pod.uid, made);
      out.keep(made.series);
    };
    const podSeries = (
      w: DeepReadonly<Workload>,
      pod: { name: string; uid: string; createdAt: number },
      state: PodState,
    ): SeriesColumns => {
      const shared = new SharedLabelSets();
      const base = { namespace: w.namespace, pod: pod.name, uid: pod.uid };
      const ordinal =
        state.node === undefined ? undefined : (this.nodeSeries.get(state.node)?.ordinal ?? nodeOrdinal(view.pools, state.node));
      const controller = podController(w.type, w.name);
      const container = containerName(w.type, w.name);
      shared.add(
        KSM.podInfo,
        {
          ...base,
          host_ip: ordinal === undefined ? undefined : nodeInternalIp(ordinal),
          pod_ip: ordinal === undefined ? undefined : this.podIps.ipOf(pod.uid),
          node: state.node?.name,
          created_by_kind: controller.kind,
          created_by_name: controller.name,
          priority_class: w.priorityClass,
          host_network: "false",
        },
        1,
      );
      for (const phase of PHASES) shared.add(KSM.podStatusPhase, { ...base, phase }, phase === state.phase ? 1 : 0);
      for (const reason of POD_STATUS_REASONS) shared.add(KSM.podStatusReason, { ...base, reason }, reason === state.statusReason ? 1 : 0);
      shared.add(KSM.podOwner, { ...base, owner_kind: controller.kind, owner_name: controller.name, owner_is_controller: "true" }, 1);
      shared.add(
        KSM.podLabels,
        { ...base, [ksmLabelName("project")]: w.project, [ksmLabelName("runai/queue")]: w.project, [ksmLabelName("user")]: w.user },
        1,
      );
      if (state.scheduled !== undefined) {
        const current = state.scheduled ? "true" : "false";
        for (const condition of CONDITION_STATUSES) shared.add(KSM.podScheduled, { ...base, condition }, condition === current ? 1 : 0);
        if (!state.scheduled) shared.add(KSM.podUnschedulable, base, 1);
      }
      if (state.reason !== undefined) shared.add(KSM.podTerminatedReason, { ...base, container, reason: state.reason }, 1);
      if (state.restarts !== undefined) {
        // pod.go: one series per container status, the spec's image beside the runtime's: the
        // reference as pulled, its digest, and the current (or last) container's ID, new with
        // every restart. Digests and IDs are stable stand-ins (no registry is modelled).
        if (w.image !== undefined)
          shared.add(
            KSM.containerInfo,
            {
              ...base,
              container,
              image_spec: w.image,
              image: w.image,
              image_id: imageId(w.image),
              container_id: `containerd://${stableHex(`container/${pod.uid}/${state.restarts}`, 8)}`,
            },
            1,
          );
        shared.add(KSM.podRestarts, { ...base, container }, state.restarts, pod.createdAt);
        // Restarts happen only after a failure here: the last termination was an Error, or the
        // OOM killer's (the kubelet's reason OOMKilled) for a container that runs out of memory.
        if (state.restarts > 0 || state.crashLooping === true)
          shared.add(KSM.podLastTerminatedReason, { ...base, container, reason: w.ending === "oom" ? "OOMKilled" : "Error" }, 1);
      }
      if (state.crashLooping === true) shared.add(KSM.podWaitingReason, { ...base, container, reason: "CrashLoopBackOff" }, 1);
      // The kubelet's waiting reason while it pulls the image and creates the container.
      if (state.creating === true) shared.add(KSM.podWaitingReason, { ...base, container, reason: "ContainerCreating" }, 1);
      if (state.restarts !== undefined) {
        // A bound pod has a container status and a Ready condition: ready while its container
        // runs; not while it waits out a crash back-off or after it terminated.
        const terminated = state.phase === "Succeeded" || state.phase === "Failed";
        const waiting = state.crashLooping === true || state.creating === true;
        const running = !terminated && !waiting;
        shared.add(KSM.containerReady, { ...base, container }, running ? 1 : 0);
        shared.add(KSM.containerRunning, { ...base, container }, running ? 1 : 0);
        shared.add(KSM.containerWaiting, { ...base, container }, waiting ? 1 : 0);
        shared.add(KSM.containerTerminated, { ...base, container }, terminated ? 1 : 0);
        for (const condition of CONDITION_STATUSES)
          shared.add(KSM.podReady, { ...base, condition }, condition === (running ? "true" : "false") ? 1 : 0);
      }
      // pod.go: one series per resource of the container's requests (limits): cpu in cores
      // (MilliValue / 1000), memory in bytes, nvidia.com/gpu as an extended resource (integer).
      // Run:ai sets requests per GPU, a CPU or memory limit only where the workload asks for one;
      // an extended resource's limit is required and equals its request.
      const resource = { ...base, container, node: state.node?.name };
      shared.add(KSM.podResourceRequests, { ...resource, resource: "cpu", unit: "core" }, (w.cpuMilliPerGpu * state.gpus) / 1000);
      shared.add(KSM.podResourceRequests, { ...resource, resource: "memory", unit: "byte" }, w.memoryBytesPerGpu * state.gpus);
      shared.add(KSM.podResourceRequests, { ...resource, resource: "nvidia_com_gpu", unit: "integer" }, state.gpus);
      if (w.cpuLimitMilliPerGpu !== undefined)
        shared.add(KSM.podResourceLimits, { ...resource, resource: "cpu", unit: "core" }, (w.cpuLimitMilliPerGpu * state.gpus) / 1000);
      if (w.memoryLimitBytes !== undefined)
        shared.add(KSM.podResourceLimits, { ...resource, resource: "memory", unit: "byte" }, w.memoryLimitBytes);
      shared.add(KSM.podResourceLimits, { ...resource, resource: "nvidia_com_gpu", unit: "integer" }, state.gpus);
      shared.add(KSM.podCreated, base, Math.floor(seconds(pod.createdAt)));
      if (state.startedAt !== undefined) shared.add(KSM.podStartTime, base, Math.floor(seconds(state.startedAt)));
      return shared.series;
    };

    for (const w of view.pending) {
      const gpusPerPod = w.gpus / Math.max(1, w.pendingPods.length);
      // PodScheduled=False appears once a scheduling cycle has found no place for the pod.
      const scheduled = w.unschedulable ? false : undefined;
      for (const pod of w.pendingPods)
        podSamples(w, pod, { phase: "Pending", gpus: gpusPerPod, ...(scheduled === undefined ? {} : { scheduled }) });
    }
    for (const w of view.running) {
      for (const pod of w.pods)
        podSamples(w, pod, {
          phase: "Running",
          node: pod.node,
          startedAt: pod.startedAt,
          scheduled: true,
          gpus: pod.gpus.length,
          restarts: w.restarts,
          crashLooping: w.backoffUntil !== null,
          creating: this.pulls.creating(pod.uid, view.now),
        });
    }
    for (const pod of view.finishedPods) {
      podSamples(pod.workload, pod, {
        phase: pod.phase,
        node: pod.node,
        startedAt: pod.startedAt,
        scheduled: true,
        reason: pod.reason,
        gpus: pod.gpuCount,
        restarts: pod.restarts,
        ...(pod.statusReason === undefined ? {} : { statusReason: pod.statusReason }),
      });
    }
    // The projects' namespaces (Run:ai creates one per project) and the system's, Active for the whole run.
    const namespaces = new Set([
      ...this.systemNamespaces,
      ...view.queues.filter((q) => q.level === "project").map((q) => projectNamespace(q.name)),
    ]);
    for (const namespace of namespaces) {
      const out = served[this.shardOfNamed("Namespace", namespace)];
      if (out === undefined) continue;
      for (const phase of NAMESPACE_PHASES)
        this.kept.add(out, `namespace/${namespace}/${phase}`, KSM.namespacePhase, { namespace, phase }, phase === "Active" ? 1 : 0);
    }
    return this.instances.flatMap(({ pod, self }, i) => {
      const series = served[i];
      if (series === undefined) return [];
      return [
        listedTarget({ job: this.options.job, host: pod.ip, port: this.options.port, path: "/metrics" }, series.end()),
        // Its own metrics, on its telemetry port: the same job (kube-prometheus' ServiceMonitor scrapes both ports of one Service).
        listedTarget({ job: this.options.job, host: pod.ip, port: this.options.telemetryPort, path: "/metrics" }, self.collect(view.now)),
      ];
    });
  }

  /**
   * A node's series label sets and shard, made the first time it is collected: its name, pool and
   * ordinal fix them for its life, so a scrape looks up nothing by name (a platform scrape's
   * 15,000 node series were each found by a key string made anew).
   */
  private nodeSeriesOf(pools: readonly DeepReadonly<Pool>[], pool: DeepReadonly<Pool>, node: DeepReadonly<Node>): NodeSeries {
    let series = this.nodeSeries.get(node);
    if (series === undefined) {
      // Its capacity's and its allocatable's series of a resource carry the same labels: one label set.
      const shared = new SharedLabelSets();
      const ordinal = nodeOrdinal(pools, node);
      const labels: Record<string, string> = { node: node.name };
      labels[ksmLabelName(pool.spec.nodeLabel.key)] = pool.spec.nodeLabel.value;
      // GPU Feature Discovery labels (NVIDIA k8s-device-plugin v0.20.0 docs/gpu-feature-discovery).
      labels[ksmLabelName("nvidia.com/gpu.product")] = pool.model.product;
      labels[ksmLabelName("nvidia.com/gpu.count")] = String(pool.spec.gpusPerNode);
      const byResource = (family: MetricFamily) =>
        NODE_RESOURCES.map(([resource, unit]) => shared.of(family, { node: node.name, resource, unit }));
      series = {
        ordinal,
        shard: this.shardOfNamed("Node", node.name),
        info: shared.of(KSM.nodeInfo, {
          node: node.name,
          // What the pool's nodes run (the blueprint's nodePools[].software).
          kernel_version: pool.spec.software.kernelVersion,
          os_image: pool.spec.software.osImage,
          container_runtime_version: pool.spec.software.containerRuntimeVersion,
          kubelet_version: pool.spec.software.kubeletVersion,
          kubeproxy_version: pool.spec.software.kubeletVersion,
          pod_cidr: podCidr(ordinal),
          system_uuid: stableUuid(node.name),
          internal_ip: nodeInternalIp(ordinal),
        }),
        labels: shared.of(KSM.nodeLabels, labels),
        // One series per node-role.kubernetes.io/<role> label (node.go's createNodeRoleFamilyGenerator).
        roles: pool.spec.nodeRoles.map((role) => shared.of(KSM.nodeRole, { node: node.name, role })),
        capacity: byResource(KSM.nodeCapacity),
        allocatable: byResource(KSM.nodeAllocatable),
        conditions: NODE_CONDITIONS.flatMap((condition) =>
          CONDITION_STATUSES.map((status) => shared.of(KSM.nodeCondition, { node: node.name, condition, status })),
        ),
        unschedulable: shared.of(KSM.nodeSpecUnschedulable, { node: node.name }),
      };
      this.nodeSeries.set(node, series);
    }
    return series;
  }
  private readonly nodeSeries = new WeakMap<DeepReadonly<Node>, NodeSeries>();

  /** A node's series, on the label sets its NodeSeries keeps (its taints' kept by key while they last). */
  private nodeSamples(out: TargetSeries, node: DeepReadonly<Node>, series: NodeSeries): void {
    const o = this.options;
    out.add(KSM.nodeInfo, series.info, 1);
    out.add(KSM.nodeLabels, series.labels, 1);
    for (const labels of series.roles) out.add(KSM.nodeRole, labels, 1);

    // What the node's status lists (the sim's nodeResources says how each figure is made).
    const { capacity, allocatable } = nodeResources(node);
    const resources = (r: typeof capacity) => [r.cpuMilli / 1000, r.memoryBytes, o.maxPodsPerNode, r.gpus];
    resources(capacity).forEach((value, i) => {
      out.add(KSM.nodeCapacity, series.capacity[i] as Labels, value);
    });
    resources(allocatable).forEach((value, i) => {
      out.add(KSM.nodeAllocatable, series.allocatable[i] as Labels, value);
    });

    // A rebooting node stops posting status: after the grace period the node-lifecycle
    // controller sets every condition Unknown. Otherwise Ready, and no pressure but memory
    // pressure where the blueprint declares it.
    const statusOf = (condition: (typeof NODE_CONDITIONS)[number]) => {
      if (node.status === "rebooting") return "unknown";
      if (condition === "Ready") return "true";
      return condition === "MemoryPressure" && node.memoryPressureUntil !== null ? "true" : "false";
    };
    let c = 0;
    for (const condition of NODE_CONDITIONS) {
      const current = statusOf(condition);
      for (const status of CONDITION_STATUSES) out.add(KSM.nodeCondition, series.conditions[c++] as Labels, status === current ? 1 : 0);
    }

    // A cordoned node (drained for its reboot, and until it is back) has spec.unschedulable set.
    out.add(KSM.nodeSpecUnschedulable, series.unschedulable, node.status === "ready" ? 0 : 1);
    // Taints come and go with the node's state: their label sets are kept while they last.
    for (const [taint, effect] of nodeTaints(node))
      this.kept.add(out, `node/${node.name}/${taint}/${effect}`, KSM.nodeSpecTaint, { node: node.name, key: taint, effect }, 1);
  }
}

/**
 * The taints the node lifecycle controller keeps on a node for its state, with the keys of
 * k8s.io/api core/v1 well_known_taints.go (v0.30.3, the version kube-state-metrics v2.13.0
 * builds with): unschedulable while cordoned; unreachable, NoSchedule and NoExecute, while its
 * kubelet posts nothing (rebooting); memory-pressure while the kubelet reports MemoryPressure.
 * Taints have no value here (an empty label, which the collector drops).
 */
function nodeTaints(node: DeepReadonly<Node>): Array<readonly [key: string, effect: string]> {
  const taints: Array<readonly [string, string]> = [];
  if (node.status !== "ready") taints.push(["node.kubernetes.io/unschedulable", "NoSchedule"]);
  if (node.status === "rebooting") {
    taints.push(["node.kubernetes.io/unreachable", "NoSchedule"]);
    taints.push(["node.kubernetes.io/unreachable", "NoExecute"]);
  } else if (node.memoryPressureUntil !== null) taints.push(["node.kubernetes.io/memory-pressure", "NoSchedule"]);
  return taints;
}
