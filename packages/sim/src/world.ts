/**
 * The simulated cluster's state: node pools, nodes, GPUs, queues, workloads and their pods.
 * Plain mutable objects owned by the Simulation; everything outside the sim package sees them
 * through the read-only types exported from index.ts.
 */
import {
  type Blueprint,
  type Ending,
  GPU_MODELS,
  type GpuModel,
  isPreemptible,
  type NodePool,
  nodeCpus,
  nodeMemoryBytes,
  nodeName,
  pciBusId,
  type WorkloadType,
} from "@gpusynth/blueprint";
import type { Rng } from "./rng.js";

export type GpuHealth = "ok" | "resetting" | "off-bus";
export type NodeStatus = "ready" | "cordoned" | "rebooting";
export type WorkloadPhase = "Pending" | "Running" | "Completed" | "Failed" | "Cancelled";

export interface Gpu {
  readonly index: number;
  readonly uuid: string;
  readonly pciBusId: string;
  readonly node: Node;
  health: GpuHealth;
  /**
   * Whether the device plugin still advertises the GPU: false from an XID it acts on until the
   * node reboots (DEVICE_PLUGIN_IGNORED_XIDS), even when the driver has reset the GPU meanwhile.
   */
  pluginHealthy: boolean;
  holder: Pod | null;
  /**
   * The pipelined job whose pod the scheduler places on this GPU while its victims terminate: KAI's
   * allocate pipelines the job onto the same releasing GPUs in every session until it binds
   * (actions/allocate), ahead of the victims' new pods, so no other pod is placed here meanwhile.
   */
  reservedFor: Workload | null;
  /** The most recent XID the GPU reported (0: none since the driver loaded). */
  lastXid: number;
  /**
   * Rows the row remapper marked after uncorrectable memory errors (XID 63: "Row Remapper: New
   * row marked for remapping, reset gpu to activate"), kept in the InfoROM through resets.
   */
  remappedRowsUncorrectable: number;
  /** Whether a row remapping ever failed (XID 64); NVML reports it for good. */
  rowRemapFailed: boolean;
  /** Simulated time the driver last (re)initialised the GPU: start, GPU reset or node reboot. */
  initialisedAt: number;
  /** When its enforced power limit is lowered (faults.powerCaps), in time order: [from, to) at `watts`. */
  readonly powerCaps: readonly PowerCap[];
}

/** A GPU's enforced power limit lowered to `watts` over [from, to) (simulated ms). */
export interface PowerCap {
  readonly from: number;
  readonly to: number;
  readonly watts: number;
}

/** The enforced power limit a GPU runs under at `t`, where one of its caps holds then. */
export function powerCapAt(gpu: { readonly powerCaps: readonly PowerCap[] }, t: number): number | undefined {
  for (const cap of gpu.powerCaps) if (cap.from <= t && t < cap.to) return cap.watts;
  return undefined;
}

export interface Node {
  readonly name: string;
  readonly index: number;
  readonly pool: Pool;
  readonly gpus: readonly Gpu[];
  status: NodeStatus;
  /** Allocatable GPUs no pod holds; kept in step by takeGpu / releaseGpu / setGpuHealth / setPluginHealth. */
  freeGpus: number;
  /** Simulated time the node last finished booting (0 for nodes up at the start). */
  bootedAt: number;
  /** Until when the kubelet reports MemoryPressure (null: no pressure). */
  memoryPressureUntil: number | null;
  /**
   * Whether NVIDIA's device plugin has registered with the kubelet since it last started: a
   * restarted kubelet lists no GPU, in capacity or allocatable, until it does (devicemanager
   * readCheckpoint, k8s.io/kubernetes pkg/kubelet/cm/devicemanager/manager.go@v1.30.2).
   */
  devicePluginRegistered: boolean;
}

export interface Pool {
  readonly name: string;
  readonly spec: NodePool;
  readonly model: GpuModel;
  readonly nodes: readonly Node[];
  /**
   * Bumped whenever a node's status or a GPU's health changes (setNodeStatus, setGpuHealth): the
   * scheduler recounts the pool's schedulable GPUs only then, not every cycle.
   */
  capacityVersion: number;
  /** Allocatable GPUs no pod holds on ready nodes: the sum of schedulableFreeGpus over the pool, kept in step. */
  schedulableFree: number;
  /**
   * Bumped whenever a node's schedulable free GPUs change (a pod's GPUs taken or released, a GPU's
   * health, a node's status): what the scheduler counts of its nodes holds until then.
   */
  freeVersion: number;
}

/** A Run:ai scheduling queue: one per project (or department) and node pool. */
export interface Queue {
  readonly name: string;
  readonly pool: string;
  readonly level: "department" | "project";
  readonly parent: Queue | null;
  readonly deserved: number;
  /** -1: no limit. */
  readonly limit: number;
  readonly overQuotaWeight: number;
  /** Declaration order; KAI breaks ties by queue age. */
  readonly order: number;
  allocated: number;
  allocatedNonPreemptible: number;
  /** CPU (millicores) and memory (bytes) its running pods request. */
  allocatedCpuMilli: number;
  allocatedMemoryBytes: number;
  /** Recomputed at the start of every scheduling cycle. */
  fairShare: number;
  /** Allocated plus pending GPUs, recomputed with the fair share. */
  requested: number;
  /** Allocated plus pending CPU (millicores) and memory (bytes), recomputed with the fair share. */
  requestedCpuMilli: number;
  requestedMemoryBytes: number;
  /** Counts changes to any figure above, so what is derived from them is worked out again only then. */
  revision: number;
}

/** A pod as the workload's controller creates it, before the scheduler binds it. */
export interface PodIdentity {
  readonly name: string;
  readonly uid: string;
  /** Simulated time the controller created the pod. */
  readonly createdAt: number;
}

/** A pod bound to a node, holding its GPUs. */
export interface Pod extends PodIdentity {
  readonly workload: Workload;
  readonly node: Node;
  readonly gpus: readonly Gpu[];
  /** Simulated time the pod was bound and started. */
  readonly startedAt: number;
}

/** A pod whose containers have terminated; it stays visible until it is deleted. */
export interface FinishedPod extends PodIdentity {
  readonly workload: Workload;
  readonly node: Node;
  readonly gpuCount: number;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly phase: "Succeeded" | "Failed";
  /** The container's terminated-state reason as the kubelet reports it. */
  readonly reason: "Completed" | "Error" | "OOMKilled";
  /** The container's restartCount when it terminated for good. */
  readonly restarts: number;
  /** The pod's status reason when the kubelet evicted it. */
  readonly statusReason?: "Evicted";
}

export interface Workload {
  readonly id: number;
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly project: string;
  readonly department: string;
  readonly user: string;
  readonly generator: string;
  readonly type: WorkloadType;
  readonly priorityClass: string;
  readonly priority: number;
  readonly preemptible: boolean;
  readonly gpus: number;
  /** CPU each pod requests per GPU it holds, in millicores (what the user asked, or Run:ai's limitRange default). */
  readonly cpuMilliPerGpu: number;
  /** Memory each pod requests per GPU it holds, in bytes. */
  readonly memoryBytesPerGpu: number;
  /** Each pod's container memory limit in bytes; undefined: none (Run:ai's default). */
  readonly memoryLimitBytes: number | undefined;
  /** Each pod's container CPU limit per GPU it holds, in millicores; undefined: none (Run:ai's default). */
  readonly cpuLimitMilliPerGpu: number | undefined;
  /** Training: the CPU its data loading needs per GPU (millicores), when the blueprint says. */
  readonly dataLoaderMilliPerGpu: number | undefined;
  /** The container image it runs: its kind's, else its type's default image; undefined when the blueprint names neither. */
  readonly image: string | undefined;
  /** Node pools the workload may run in, most preferred first. */
  readonly nodePools: readonly string[];
  readonly submittedAt: number;
  /** When it last became Pending: submission, or its latest preemption. */
  pendingSince: number;
  /** Run time the workload needs before `ending` happens. */
  readonly runMs: number;
  readonly ending: Ending;
  readonly pendingPatienceMs: number | undefined;
  /** Run:ai restartPolicy: OnFailure restarts a failed container in place (CrashLoopBackOff). */
  readonly restartPolicy: "Never" | "OnFailure";
  readonly backoffLimit: number;
  /** Container restarts of the current pods (their restartCount); new pods start at 0. */
  restarts: number;
  /** While the failed container waits out the kubelet's back-off: when it restarts. */
  backoffUntil: number | null;
  phase: WorkloadPhase;
  pool: string | null;
  pods: Pod[];
  /** Pods created and waiting to be scheduled (while Pending). */
  pendingPods: PodIdentity[];
  /** Times started; 1 on the first start, +1 after each preemption. */
  attempts: number;
  firstStartedAt: number | null;
  runningSince: number | null;
  /** Run time accumulated before the current attempt (checkpointed progress). */
  ranMs: number;
  /** Bumped whenever a scheduled end is invalidated (preemption, failure). */
  endToken: number;
  /**
   * How fast its run progresses: 1, or its slowest GPU's share of its clock under a lowered power
   * limit (a distributed job's ranks all wait on the slowest). Since `paceFrom`, after
   * `paceProgressMs` of progress in the current run.
   */
  pace: number;
  paceFrom: number;
  paceProgressMs: number;
  /** A scheduling cycle has found no place for it since it last became pending (PodScheduled=False). */
  unschedulable: boolean;
  /** Preempted, its pods terminating on their GPUs until then (still listed as running, never a victim again). */
  terminatingUntil: number | null;
  /** Pipelined onto GPUs its victims still hold: no action tries it again until then. */
  pipelinedUntil: number | null;
  /** The GPUs it is pipelined onto, kept for it until then (Gpu.reservedFor). */
  reservedGpus: readonly Gpu[];
}

/** The namespace Run:ai creates for a project and runs its workloads in: runai-<project>. */
export function projectNamespace(project: string): string {
  return `runai-${project}`;
}

export function isTerminal(phase: WorkloadPhase): boolean {
  return phase === "Completed" || phase === "Failed" || phase === "Cancelled";
}

export { isPreemptible };

export function buildPools(bp: Blueprint, rng: Rng): Pool[] {
  return bp.nodePools.map((spec) => {
    const model = GPU_MODELS[spec.gpuModel];
    const nodes: Node[] = [];
    const pool: Pool = {
      name: spec.name,
      spec,
      model,
      nodes,
      capacityVersion: 0,
      schedulableFree: spec.nodes * spec.gpusPerNode,
      freeVersion: 0,
    };
    for (let n = 0; n < spec.nodes; n++) {
      const gpus: Gpu[] = [];
      const node: Node = {
        name: nodeName(spec, n),
        index: n,
        pool,
        gpus,
        status: "ready",
        freeGpus: spec.gpusPerNode,
        bootedAt: 0,
        memoryPressureUntil: null,
        devicePluginRegistered: true,
      };
      for (let g = 0; g < spec.gpusPerNode; g++) {
        gpus.push({
          index: g,
          uuid: `GPU-${rng.uuid()}`,
          pciBusId: pciBusId(model, g),
          node,
          health: "ok",
          holder: null,
          reservedFor: null,
          pluginHealthy: true,
          lastXid: 0,
          remappedRowsUncorrectable: 0,
          rowRemapFailed: false,
          initialisedAt: 0,
          powerCaps: bp.faults.powerCaps
            .filter((cap) => cap.node === node.name && cap.gpu === g)
            .map((cap) => ({ from: cap.at, to: cap.at + cap.for, watts: cap.watts }))
            .sort((a, b) => a.from - b.from),
        });
      }
      nodes.push(node);
    }
    return pool;
  });
}

/** Department queues per pool, then project queues under them, in declaration order. */
export function buildQueues(bp: Blueprint): Queue[] {
  const queues: Queue[] = [];
  let order = 0;
  const fresh = {
    allocated: 0,
    allocatedNonPreemptible: 0,
    allocatedCpuMilli: 0,
    allocatedMemoryBytes: 0,
    fairShare: 0,
    requested: 0,
    requestedCpuMilli: 0,
    requestedMemoryBytes: 0,
    revision: 0,
  };
  for (const pool of bp.nodePools) {
    const departmentQueues = new Map<string, Queue>();
    for (const dept of bp.departments) {
      const quota = dept.nodePools[pool.name];
      const hasProjects = bp.projects.some((p) => p.department === dept.name && p.nodePools[pool.name] !== undefined);
      if (quota === undefined && !hasProjects) continue;
      const queue: Queue = {
        name: dept.name,
        pool: pool.name,
        level: "department",
        parent: null,
        deserved: quota?.deserved ?? 0,
        limit: quota?.limit ?? -1,
        overQuotaWeight: quota?.overQuotaWeight ?? 1,
        order: order++,
        ...fresh,
      };
      departmentQueues.set(dept.name, queue);
      queues.push(queue);
    }
    for (const project of bp.projects) {
      const quota = project.nodePools[pool.name];
      if (quota === undefined) continue;
      queues.push({
        name: project.name,
        pool: pool.name,
        level: "project",
        parent: departmentQueues.get(project.department) ?? null,
        deserved: quota.deserved,
        limit: quota.limit,
        overQuotaWeight: quota.overQuotaWeight,
        order: order++,
        ...fresh,
      });
    }
  }
  return queues;
}

export function queueKey(project: string, pool: string): string {
  return `${project}\u0000${pool}`;
}

/** A GPU a pod may be given: working, and advertised by the device plugin. */
export function isAllocatable(gpu: { readonly health: GpuHealth; readonly pluginHealthy: boolean }): boolean {
  return gpu.health === "ok" && gpu.pluginHealthy;
}

/** A GPU a new pod may take: allocatable, held by no pod and kept for no pipelined job. */
export function isFree(gpu: Gpu): boolean {
  return isAllocatable(gpu) && gpu.holder === null && gpu.reservedFor === null;
}

/** The GPU is kept for a pipelined job: free to no other pod until unreserved. */
export function reserveGpu(gpu: Gpu, w: Workload): void {
  if (gpu.reservedFor !== null) throw new Error(`GPU ${gpu.uuid} on ${gpu.node.name} is already reserved for ${gpu.reservedFor.name}`);
  const wasFree = isFree(gpu);
  gpu.reservedFor = w;
  freeMoved(gpu, wasFree);
}

export function unreserveGpu(gpu: Gpu): void {
  const wasFree = isFree(gpu);
  gpu.reservedFor = null;
  freeMoved(gpu, wasFree);
}

export function takeGpu(gpu: Gpu, pod: Pod): void {
  if (!isFree(gpu)) throw new Error(`GPU ${gpu.uuid} on ${gpu.node.name} is not free`);
  gpu.holder = pod;
  changeFree(gpu.node, -1);
}

export function releaseGpu(gpu: Gpu): void {
  const wasFree = isFree(gpu);
  gpu.holder = null;
  freeMoved(gpu, wasFree);
}

/** The device plugin marks the GPU (un)healthy: the kubelet's allocatable follows. */
export function setPluginHealth(gpu: Gpu, healthy: boolean): void {
  if (gpu.pluginHealthy === healthy) return;
  changeAllocatable(gpu, () => {
    gpu.pluginHealthy = healthy;
  });
}

export function setGpuHealth(gpu: Gpu, health: GpuHealth): void {
  changeAllocatable(gpu, () => {
    gpu.health = health;
  });
}

/** Applies a change to whether a GPU is allocatable, keeping its node's free count and its pool's capacity version in step. */
function changeAllocatable(gpu: Gpu, change: () => void): void {
  const wasFree = isFree(gpu);
  change();
  gpu.node.pool.capacityVersion++;
  freeMoved(gpu, wasFree);
}

/** After a change to the GPU: its node's free count follows where it became free or stopped being so. */
function freeMoved(gpu: Gpu, wasFree: boolean): void {
  const nowFree = isFree(gpu);
  if (wasFree && !nowFree) changeFree(gpu.node, -1);
  else if (!wasFree && nowFree) changeFree(gpu.node, 1);
}

/** A node's free count moves, and with it its pool's schedulable total while the node is ready. */
function changeFree(node: Node, delta: number): void {
  node.freeGpus += delta;
  if (node.status === "ready") node.pool.schedulableFree += delta;
  node.pool.freeVersion++;
}

/** GPUs a new pod may be placed on: healthy, free, on a node that accepts pods. */
export function schedulableFreeGpus(node: Node): number {
  return node.status === "ready" ? node.freeGpus : 0;
}

export function setNodeStatus(node: Node, status: NodeStatus): void {
  node.pool.schedulableFree += (status === "ready" ? node.freeGpus : 0) - schedulableFreeGpus(node);
  node.status = status;
  node.pool.capacityVersion++;
  node.pool.freeVersion++;
}

/** The kubelet's default hard eviction threshold memory.available<100Mi (pkg/kubelet/eviction/defaults_linux.go). */
export const EVICTION_HARD_MEMORY_BYTES = 100 * 2 ** 20;

/** The kubelet's --max-pods default: the pods a node's capacity and allocatable list. */
export const KUBELET_MAX_PODS = 110;

/** A node's capacity and allocatable as its status lists them (cpu, memory, GPUs; pods: KUBELET_MAX_PODS). */
export interface NodeResources {
  readonly node: string;
  readonly capacity: { readonly cpuMilli: number; readonly memoryBytes: number; readonly gpus: number };
  readonly allocatable: { readonly cpuMilli: number; readonly memoryBytes: number; readonly gpus: number };
}

/**
 * What a node's status lists, for every reader of it (kube-state-metrics, KAI's snapshot). CPUs
 * are logical (nodeCpus). Allocatable = capacity − kube-reserved − system-reserved − the hard
 * eviction threshold (Kubernetes, "Reserve Compute Resources for System Daemons"): the kubelet
 * reserves nothing by default, but keeps memory.available<100Mi back. GPUs are those the device
 * plugin advertises: it drops one on an XID it acts on until it restarts with the node; a rebooting
 * node's status keeps what it last posted; a restarted kubelet lists none, capacity included, until
 * the plugin registers again.
 */
export function nodeResources(node: {
  readonly name: string;
  readonly pool: { readonly spec: NodePool };
  readonly gpus: readonly { readonly pluginHealthy: boolean }[];
  readonly devicePluginRegistered: boolean;
}): NodeResources {
  const { spec } = node.pool;
  const cpuMilli = nodeCpus(spec) * 1000;
  const memoryBytes = nodeMemoryBytes(spec);
  const registered = node.devicePluginRegistered;
  return {
    node: node.name,
    capacity: { cpuMilli, memoryBytes, gpus: registered ? spec.gpusPerNode : 0 },
    allocatable: {
      cpuMilli,
      memoryBytes: memoryBytes - EVICTION_HARD_MEMORY_BYTES,
      gpus: registered ? node.gpus.filter((g) => g.pluginHealthy).length : 0,
    },
  };
}
