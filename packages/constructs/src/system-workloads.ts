/**
 * The system workloads a Run:ai GPU cluster runs besides the users' jobs, from their charts and
 * manifests at a pin: kube-system (kubeadm's kube-proxy and CoreDNS at Kubernetes v1.30.2, the
 * Calico CNI), the NVIDIA GPU Operator (its DaemonSets on every GPU node, its Deployments, and
 * node-feature-discovery), KAI-Scheduler's control components, and kube-prometheus' node-exporter
 * where the blueprint runs it (telemetry.nodeExporter). Run:ai's own cluster
 * components are not here: no public chart pins them (cantfind.md). Each entry cites where its name, containers and resources come from;
 * signals/kube-state-metrics.md ("System workloads") lists them. Their pods exist for the whole run:
 * created when the cluster was installed, restarted in place when their node reboots.
 */
import { type Blueprint, nodeName } from "@gpusynth/blueprint";
import { nodeInternalIp, systemPodIpOnNode } from "./addresses.js";
import { generatedSuffix } from "./naming.js";
import { between, stableUuid } from "./noise.js";

const MI = 2 ** 20;

export interface SystemContainer {
  readonly name: string;
  readonly image: string;
  /** Requests and limits exactly as the source sets them (absent: none, and no series). */
  readonly requests?: { readonly cpuMilli?: number; readonly memoryBytes?: number };
  readonly limits?: { readonly cpuMilli?: number; readonly memoryBytes?: number };
}

export interface SystemWorkload {
  readonly kind: "DaemonSet" | "Deployment" | "StatefulSet";
  /** DaemonSets: the nodes it runs on (none: the object exists, its node selector matches no node here). */
  readonly runsOn?: "every node" | "no node";
  readonly name: string;
  readonly namespace: string;
  /** Deployments and StatefulSets: replicas. */
  readonly replicas?: number;
  /** Deployments: the rolling update's maxUnavailable and maxSurge (absent: strategy Recreate). */
  readonly rollingUpdate?: { readonly maxUnavailable: number | `${number}%`; readonly maxSurge: number | `${number}%` };
  readonly containers: readonly SystemContainer[];
  readonly hostNetwork: boolean;
  readonly priorityClass?: string;
  /** Where the entry comes from: repository, path and pin. */
  readonly source: string;
}

/** kubeadm's addons at Kubernetes v1.30.2 (39683505b630). */
const KUBEADM_ADDONS: readonly SystemWorkload[] = [
  {
    kind: "DaemonSet",
    name: "kube-proxy",
    namespace: "kube-system",
    containers: [{ name: "kube-proxy", image: "registry.k8s.io/kube-proxy:v1.30.2" }],
    hostNetwork: true,
    priorityClass: "system-node-critical",
    source: "kubernetes/kubernetes cmd/kubeadm/app/phases/addons/proxy/manifests.go@v1.30.2 L56-112",
  },
  {
    kind: "Deployment",
    name: "coredns",
    namespace: "kube-system",
    replicas: 2,
    rollingUpdate: { maxUnavailable: 1, maxSurge: "25%" },
    containers: [
      {
        name: "coredns",
        image: "registry.k8s.io/coredns/coredns:v1.11.1",
        requests: { cpuMilli: 100, memoryBytes: 70 * MI },
        limits: { memoryBytes: 170 * MI },
      },
    ],
    hostNetwork: false,
    priorityClass: "system-cluster-critical",
    source: "kubernetes/kubernetes cmd/kubeadm/app/phases/addons/dns/manifests.go@v1.30.2 L59-146, dns.go L49",
  },
];

/** Calico's manifest install v3.28.0 (413e6f5593a8). */
const CALICO: readonly SystemWorkload[] = [
  {
    kind: "DaemonSet",
    name: "calico-node",
    namespace: "kube-system",
    containers: [{ name: "calico-node", image: "docker.io/calico/node:v3.28.0", requests: { cpuMilli: 250 } }],
    hostNetwork: true,
    priorityClass: "system-node-critical",
    source: "projectcalico/calico manifests/calico.yaml@v3.28.0 L4757-4974",
  },
  {
    kind: "Deployment",
    name: "calico-kube-controllers",
    namespace: "kube-system",
    replicas: 1,
    containers: [{ name: "calico-kube-controllers", image: "docker.io/calico/kube-controllers:v3.28.0" }],
    hostNetwork: false,
    priorityClass: "system-cluster-critical",
    source: "projectcalico/calico manifests/calico.yaml@v3.28.0 L5078-5113",
  },
];

const KSM_CONTAINERS = [{ name: "kube-state-metrics", image: "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0" }];

/**
 * kube-state-metrics itself (the scrape targets of its families): its standard manifests' one
 * Deployment replica, or, sharded, its autosharding example's StatefulSet with a pod per shard
 * (each finds its shard in its pod name's ordinal and the shard count in the replicas).
 */
export function kubeStateMetricsWorkload(shards: number): SystemWorkload {
  const common = { name: "kube-state-metrics", namespace: "kube-system", containers: KSM_CONTAINERS, hostNetwork: false } as const;
  return shards === 1
    ? {
        ...common,
        kind: "Deployment",
        replicas: 1,
        rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" },
        source: "kubernetes/kube-state-metrics examples/standard/deployment.yaml@v2.13.0 (76c5888e)",
      }
    : {
        ...common,
        kind: "StatefulSet",
        replicas: shards,
        source: "kubernetes/kube-state-metrics examples/autosharding/statefulset.yaml@v2.13.0 (76c5888e)",
      };
}

const GPU_OPERATOR_PIN = "NVIDIA/gpu-operator v26.7.0 (10ee5b3638b8)";
const VALIDATOR = "nvcr.io/nvidia/gpu-operator:v26.7.0";
const NFD = "registry.k8s.io/nfd/node-feature-discovery:v0.19.0";

/**
 * The GPU Operator with its chart's defaults, installed as its README says
 * (`helm install --generate-name -n gpu-operator`: the release is the chart's name and the
 * install's Unix time, which prefixes the node-feature-discovery subchart's objects). Every GPU
 * node runs the driver, toolkit, validator, device plugin, dcgm-exporter and GPU Feature Discovery
 * DaemonSets' pods (their node selectors are the nvidia.com/gpu.deploy.* labels the operator sets
 * on GPU nodes, every node here); the MPS control daemon and MIG manager DaemonSets exist with no
 * pod (no node is MPS- or MIG-capable). No operand container sets resources.
 */
function gpuOperator(release: string, driverVersion: string): SystemWorkload[] {
  const operand = (name: string, container: string, image: string, source: string, runsOn: SystemWorkload["runsOn"] = "every node") => ({
    kind: "DaemonSet" as const,
    name,
    namespace: "gpu-operator",
    runsOn,
    containers: [{ name: container, image }],
    hostNetwork: false,
    source: `${GPU_OPERATOR_PIN} ${source}`,
  });
  /** node-feature-discovery's components (the chart's subchart): one role each, named after the release. */
  const nfd = (
    role: string,
    kind: SystemWorkload["kind"],
    requests: SystemContainer["requests"],
    memoryLimit: number,
    template: string,
  ) => ({
    kind,
    name: `${release}-node-feature-discovery-${role}`,
    namespace: "gpu-operator",
    ...(kind === "Deployment"
      ? { replicas: 1, rollingUpdate: { maxUnavailable: "25%" as const, maxSurge: "25%" as const } }
      : { runsOn: "every node" as const }),
    containers: [{ name: role, image: NFD, ...(requests === undefined ? {} : { requests }), limits: { memoryBytes: memoryLimit } }],
    hostNetwork: false,
    priorityClass: "system-node-critical",
    source: `${GPU_OPERATOR_PIN} deployments/gpu-operator/charts/node-feature-discovery/templates/${template}, values.yaml`,
  });
  return [
    {
      kind: "Deployment",
      name: "gpu-operator",
      namespace: "gpu-operator",
      replicas: 1,
      rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" },
      containers: [
        {
          name: "gpu-operator",
          image: "nvcr.io/nvidia/gpu-operator:v26.7.0",
          requests: { cpuMilli: 200, memoryBytes: 100 * MI },
          limits: { cpuMilli: 500, memoryBytes: 350 * MI },
        },
      ],
      hostNetwork: false,
      source: `${GPU_OPERATOR_PIN} deployments/gpu-operator/templates/operator.yaml, values.yaml L72-120`,
    },
    // The driver image's tag is the driver version and the node's OS (Ubuntu 22.04 here: the pools' software.osImage).
    operand(
      "nvidia-driver-daemonset",
      "nvidia-driver-ctr",
      `nvcr.io/nvidia/driver:${driverVersion}-ubuntu22.04`,
      "assets/state-driver/0500_daemonset.yaml, controllers/object_controls.go L2977-2986",
    ),
    operand(
      "nvidia-container-toolkit-daemonset",
      "nvidia-container-toolkit-ctr",
      "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0",
      "assets/state-container-toolkit/0500_daemonset.yaml",
    ),
    operand("nvidia-operator-validator", "nvidia-operator-validator", VALIDATOR, "assets/state-operator-validation/0500_daemonset.yaml"),
    operand(
      "nvidia-device-plugin-daemonset",
      "nvidia-device-plugin",
      "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
      "assets/state-device-plugin/0500_daemonset.yaml",
    ),
    operand(
      "nvidia-device-plugin-mps-control-daemon",
      "mps-control-daemon-ctr",
      "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
      "assets/state-mps-control-daemon/0400_daemonset.yaml",
      "no node",
    ),
    operand(
      "nvidia-dcgm-exporter",
      "nvidia-dcgm-exporter",
      "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless",
      "assets/state-dcgm-exporter/0800_daemonset.yaml",
    ),
    operand(
      "gpu-feature-discovery",
      "gpu-feature-discovery",
      "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
      "assets/gpu-feature-discovery/0500_daemonset.yaml",
    ),
    operand(
      "nvidia-mig-manager",
      "nvidia-mig-manager",
      "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.15.0",
      "assets/state-mig-manager/0600_daemonset.yaml",
      "no node",
    ),
    nfd("master", "Deployment", { cpuMilli: 100, memoryBytes: 128 * MI }, 4096 * MI, "master.yaml"),
    nfd("worker", "DaemonSet", { cpuMilli: 5, memoryBytes: 64 * MI }, 512 * MI, "worker.yaml"),
    nfd("gc", "Deployment", { cpuMilli: 10, memoryBytes: 128 * MI }, 1024 * MI, "nfd-gc.yaml"),
  ];
}

/**
 * KAI-Scheduler v0.13.0 (5d35ecab74e6) installed with its chart's defaults in kai-scheduler: the
 * chart renders the operator, which creates the other six from its Config and SchedulingShard
 * (resources: the operator's generic defaults, which it fills in before the component-specific
 * ones; the chart sets none for the operator). Rolling updates use the API's 25 % defaults.
 */
const KAI_PIN = "NVIDIA/KAI-Scheduler v0.13.0 (5d35ecab74e6)";
function kaiScheduler(): SystemWorkload[] {
  const component = (name: string, image: string, requests?: SystemContainer["requests"], limits?: SystemContainer["limits"]) => ({
    kind: "Deployment" as const,
    name,
    namespace: "kai-scheduler",
    replicas: 1,
    rollingUpdate: { maxUnavailable: "25%" as const, maxSurge: "25%" as const },
    containers: [
      {
        name,
        image: `ghcr.io/nvidia/kai-scheduler/${image}:v0.13.0`,
        ...(requests === undefined ? {} : { requests }),
        ...(limits === undefined ? {} : { limits }),
      },
    ],
    hostNetwork: false,
    source: `${KAI_PIN} deployments/kai-scheduler (chart) and pkg/operator (the operands' names and resource defaults)`,
  });
  const generic = [
    { cpuMilli: 50, memoryBytes: 256 * MI },
    { cpuMilli: 100, memoryBytes: 512 * MI },
  ] as const;
  return [
    {
      ...component("kai-operator", "operator"),
      containers: [{ name: "operator", image: "ghcr.io/nvidia/kai-scheduler/operator:v0.13.0" }],
    },
    component("binder", "binder", { cpuMilli: 50, memoryBytes: 200 * MI }, { cpuMilli: 100, memoryBytes: 200 * MI }),
    component("kai-scheduler-default", "scheduler", { cpuMilli: 250, memoryBytes: 512 * MI }, { cpuMilli: 700, memoryBytes: 512 * MI }),
    component("queue-controller", "queuecontroller", ...generic),
    component("pod-grouper", "podgrouper", ...generic),
    component("podgroup-controller", "podgroupcontroller", ...generic),
    component("admission", "admission", ...generic),
  ];
}

/**
 * kube-prometheus v0.18.0's node-exporter (manifests/nodeExporter-daemonset.yaml): node-exporter
 * behind kube-rbac-proxy on the host network, on every node (it tolerates every taint).
 */
export const NODE_EXPORTER_WORKLOAD: SystemWorkload = {
  kind: "DaemonSet",
  name: "node-exporter",
  namespace: "monitoring",
  containers: [
    {
      name: "node-exporter",
      image: "quay.io/prometheus/node-exporter:v1.11.1",
      requests: { cpuMilli: 102, memoryBytes: 180 * MI },
      limits: { cpuMilli: 250, memoryBytes: 180 * MI },
    },
    {
      name: "kube-rbac-proxy",
      image: "quay.io/brancz/kube-rbac-proxy:v0.22.0",
      requests: { cpuMilli: 10, memoryBytes: 20 * MI },
      limits: { cpuMilli: 20, memoryBytes: 40 * MI },
    },
  ],
  hostNetwork: true,
  priorityClass: "system-cluster-critical",
  source: "prometheus-operator/kube-prometheus manifests/nodeExporter-daemonset.yaml@v0.18.0 (4775d44d)",
};

/** Everything a cluster runs besides its users' workloads. */
function systemWorkloads(blueprint: Blueprint): readonly SystemWorkload[] {
  const { cluster, time, telemetry } = blueprint;
  const release = `gpu-operator-${Math.floor((time.start + installedAt(cluster.name)) / 1000)}`;
  return [
    ...KUBEADM_ADDONS,
    kubeStateMetricsWorkload(telemetry.kubeStateMetrics.shards),
    ...CALICO,
    ...gpuOperator(release, telemetry.driverVersion),
    ...kaiScheduler(),
    ...(telemetry.nodeExporter ? [NODE_EXPORTER_WORKLOAD] : []),
  ];
}

/** The namespaces kubeadm creates, and those of the system workloads. */
export function systemNamespaces({ workloads }: System): string[] {
  return [...new Set(["default", "kube-node-lease", "kube-public", "kube-system", ...workloads.map((w) => w.namespace)])];
}

/** One pod of a system workload. */
export interface SystemPod {
  readonly workload: SystemWorkload;
  readonly name: string;
  readonly uid: string;
  readonly node: string;
  /** Its node's address. */
  readonly hostIp: string;
  /** Its address: the node's for a pod on the host network, else one kept for system pods in the node's pod CIDR. */
  readonly ip: string;
  /** Its controller: the DaemonSet or StatefulSet, or the Deployment's ReplicaSet. */
  readonly owner: { readonly kind: "DaemonSet" | "ReplicaSet" | "StatefulSet"; readonly name: string };
  /** Simulated ms (before the run's start: the cluster was installed then). */
  readonly createdAt: number;
  readonly startedAt: number;
}

const DAY = 86_400_000;

/** When the cluster's system workloads were installed: 30 to 180 days before the run (a modelling choice). */
function installedAt(clusterName: string): number {
  return -Math.round(between(`${clusterName}/installed`, 30 * DAY, 180 * DAY));
}

/** A Deployment's current ReplicaSet: `<deployment>-<pod-template-hash>` (10 characters, as the controller hashes the template). */
export function replicaSetName(workload: SystemWorkload): string {
  return `${workload.name}-${generatedSuffix(`${workload.namespace}/${workload.name}/template`, 10)}`;
}

/** A DaemonSet's pod on a node: `<daemonset>-<5 characters>` (generateName), fixed for the node. */
export function daemonSetPodName(daemonSet: string, node: string): string {
  return `${daemonSet}-${generatedSuffix(`${daemonSet}/${node}`)}`;
}

/** A cluster's system workloads and their pods. */
export interface System {
  readonly workloads: readonly SystemWorkload[];
  /**
   * A DaemonSet's pod on each node, a Deployment's replicas spread over the nodes (the simulated
   * cluster has no CPU-only nodes; where each lands is fixed by its name).
   */
  readonly pods: readonly SystemPod[];
}

/** A blueprint's system, worked out once per blueprint. */
export function systemOf(blueprint: Blueprint): System {
  let system = systems.get(blueprint);
  if (system === undefined) {
    const workloads = systemWorkloads(blueprint);
    system = { workloads, pods: placePods(blueprint, workloads) };
    systems.set(blueprint, system);
  }
  return system;
}
const systems = new WeakMap<Blueprint, System>();

/** A system workload's pods, in order (a StatefulSet's by ordinal). */
export function systemPodsOf(blueprint: Blueprint, workload: string): SystemPod[] {
  const pods = systemOf(blueprint).pods.filter((p) => p.workload.name === workload);
  if (pods.length === 0) throw new Error(`no system workload ${workload}`);
  return pods;
}

/** A system workload's first pod (the one a scrape of it reaches, whose log is read). */
export function systemPodOf(blueprint: Blueprint, workload: string): SystemPod {
  return systemPodsOf(blueprint, workload)[0] as SystemPod;
}

function placePods(blueprint: Blueprint, workloads: readonly SystemWorkload[]): SystemPod[] {
  const clusterName = blueprint.cluster.name;
  const nodes = blueprint.nodePools.flatMap((pool) => Array.from({ length: pool.nodes }, (_, index) => nodeName(pool, index)));
  // Looked up once per system pod: searching the list took 4 of the 5.2 s hyperscale.yaml's run took to start.
  const ordinals = new Map(nodes.map((node, ordinal) => [node, ordinal]));
  const installed = installedAt(clusterName);
  const slots = new Map<string, number>();
  const pods: SystemPod[] = [];
  for (const workload of workloads) {
    const place = (node: string, name: string, owner: SystemPod["owner"]) => {
      const key = `${workload.namespace}/${name}`;
      const createdAt = installed + Math.round(between(`${key}/created`, 0, 600_000));
      const ordinal = ordinals.get(node);
      if (ordinal === undefined) throw new Error(`system pod ${key} placed on ${node}, no node of the blueprint`);
      const hostIp = nodeInternalIp(ordinal);
      let ip = hostIp;
      if (!workload.hostNetwork) {
        const slot = slots.get(node) ?? 0;
        slots.set(node, slot + 1);
        ip = systemPodIpOnNode(ordinal, slot);
      }
      pods.push({ workload, name, uid: stableUuid(`pod/${key}`), node, hostIp, ip, owner, createdAt, startedAt: createdAt + 2_000 });
    };
    if (workload.kind === "DaemonSet") {
      if (workload.runsOn === "no node") continue;
      for (const node of nodes) place(node, daemonSetPodName(workload.name, node), { kind: "DaemonSet", name: workload.name });
    } else if (workload.kind === "StatefulSet") {
      // A StatefulSet's pods are <statefulset>-<ordinal> (pkg/controller/statefulset/stateful_set_utils.go).
      for (let i = 0; i < (workload.replicas ?? 1); i++) {
        const name = `${workload.name}-${i}`;
        place(nodes[Math.floor(between(`${workload.namespace}/${name}/node`, 0, nodes.length))] as string, name, {
          kind: "StatefulSet",
          name: workload.name,
        });
      }
    } else {
      const replicaSet = replicaSetName(workload);
      for (let i = 0; i < (workload.replicas ?? 1); i++) {
        const name = `${replicaSet}-${generatedSuffix(`${replicaSet}/${i}`)}`;
        place(nodes[Math.floor(between(`${name}/node`, 0, nodes.length))] as string, name, { kind: "ReplicaSet", name: replicaSet });
      }
    }
  }
  return pods;
}
