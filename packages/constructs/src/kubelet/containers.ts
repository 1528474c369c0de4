/**
 * The containers a node's kubelet runs, as cAdvisor lists their cgroups: the users' containers
 * from the moment each starts (after its image is pulled: the shared ImagePulls) until it stops,
 * and the system pods' containers (system-workloads.ts) while their node is up, started
 * again after each reboot. Each comes with its pod, its cgroup and its usage (usage.ts).
 *
 * Cgroups are the kubelet's systemd driver's (pkg/kubelet/cm/cgroup_manager_linux.go@v1.30.2:
 * `/kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid with _>.slice`, Guaranteed pods
 * directly under kubepods.slice) with containerd's container scope inside
 * (`cri-containerd-<container id>.scope`: signals/kubelet.md).
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { type DomainEvent, dataWaitShare, type PodPlacement, stopsContainers, type WorkloadRef } from "@gpusynth/sim";
import { containerName } from "../naming.js";
import { stableHex } from "../noise.js";
import { type SystemContainer, type SystemPod, systemOf } from "../system-workloads.js";
import type { ImagePulls } from "./image-pulls.js";
import { type ContainerUsage, containerUsage, cpuSeconds, memoryUse, SYSTEM_PROFILE, UNREQUESTED, WORKLOAD_PROFILES } from "./usage.js";

export type QosClass = "Guaranteed" | "Burstable" | "BestEffort";

/** A pod as its cgroup shows it. */
export interface PodCgroup {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly qos: QosClass;
}

export interface NodeContainer {
  readonly pod: PodCgroup;
  readonly container: string;
  readonly image: string;
  /** The runtime's container ID (64 hex), the same kube-state-metrics' container_id carries. */
  readonly id: string;
  /** CPU request and limit (millicores; 0: none) and memory limit (bytes; 0: none) as the kubelet sets the cgroup. */
  readonly cpuRequestMilli: number;
  readonly cpuLimitMilli: number;
  readonly memoryLimitBytes: number;
  readonly usage: ContainerUsage;
}

/** The pod's cgroup (systemd driver: dashes of the UID escaped to underscores). */
export function podCgroupPath(pod: PodCgroup): string {
  const uid = pod.uid.replaceAll("-", "_");
  if (pod.qos === "Guaranteed") return `/kubepods.slice/kubepods-pod${uid}.slice`;
  const qos = pod.qos.toLowerCase();
  return `/kubepods.slice/kubepods-${qos}.slice/kubepods-${qos}-pod${uid}.slice`;
}

/** The container's cgroup: containerd's scope inside its pod's slice. */
export function containerCgroupPath(c: NodeContainer): string {
  return `${podCgroupPath(c.pod)}/cri-containerd-${c.id}.scope`;
}

/** The runtime's ID of a container: kube-state-metrics' container_id without its `containerd://`. */
export function workloadContainerId(podUid: string, restarts: number): string {
  return stableHex(`container/${podUid}/${restarts}`, 8);
}
export function systemContainerId(podUid: string, container: string, restarts: number): string {
  return stableHex(`container/${podUid}/${container}/${restarts}`, 8);
}

/**
 * The pod's QoS class (pkg/apis/core/v1/helper/qos/qos.go@v1.30.2): Guaranteed when every
 * container limits CPU and memory and requests what it limits, BestEffort when none requests or
 * limits either, Burstable otherwise.
 */
export function qosClass(containers: readonly Pick<SystemContainer, "requests" | "limits">[]): QosClass {
  const any = containers.some(
    (c) =>
      c.requests?.cpuMilli !== undefined ||
      c.requests?.memoryBytes !== undefined ||
      c.limits?.cpuMilli !== undefined ||
      c.limits?.memoryBytes !== undefined,
  );
  if (!any) return "BestEffort";
  const guaranteed = containers.every(
    (c) =>
      c.limits?.cpuMilli !== undefined &&
      c.limits?.memoryBytes !== undefined &&
      (c.requests?.cpuMilli ?? c.limits.cpuMilli) === c.limits.cpuMilli &&
      (c.requests?.memoryBytes ?? c.limits.memoryBytes) === c.limits.memoryBytes,
  );
  return guaranteed ? "Guaranteed" : "Burstable";
}

/** What the users' containers that stopped on a node since it booted used, as its kernel counted it. */
export interface Stopped {
  readonly cpuSeconds: number;
  /** Resident memory and page cache each held when it stopped (the pages it faulted in). */
  readonly memoryBytes: number;
  /** Its page cache (read in from disk). */
  readonly cacheBytes: number;
  /** Containers the OOM killer ended. */
  readonly oomKills: number;
}
const NOTHING_STOPPED: Stopped = { cpuSeconds: 0, memoryBytes: 0, cacheBytes: 0, oomKills: 0 };

export class NodeContainers {
  /** The users' containers by node, then pod UID; a container not yet started has `from` in the future. */
  private readonly workloads = new Map<string, Map<string, NodeContainer>>();
  /** Per node: the system pods' containers, and when the node last came up. */
  private readonly system = new Map<string, { readonly pod: SystemPod; readonly spec: SystemContainer }[]>();
  private readonly readyAt = new Map<string, number>();
  private readonly reboots = new Map<string, number>();
  /** Per node: what the users' containers that stopped since it last came up used, and OOM kills. */
  private readonly stopped = new Map<string, Stopped>();
  /** Per node: the users' pods whose sandbox runs (from admission to the pod's end; through a container's back-off too). */
  private readonly sandboxes = new Map<string, Set<string>>();
  /** Per node: the system pods it runs, and the pods its kubelet evicted since it last came up. */
  private readonly systemPods = new Map<string, number>();
  private readonly evictions = new Map<string, number>();

  constructor(
    blueprint: Blueprint,
    private readonly pulls: ImagePulls,
  ) {
    for (const pod of systemOf(blueprint).pods) {
      if (pod.workload.runsOn === "no node") continue;
      let list = this.system.get(pod.node);
      if (list === undefined) {
        list = [];
        this.system.set(pod.node, list);
      }
      for (const spec of pod.workload.containers) list.push({ pod, spec });
      this.systemPods.set(pod.node, (this.systemPods.get(pod.node) ?? 0) + 1);
    }
  }

  /** Feeds a domain event, after the image pulls have seen it. */
  readonly record = (event: DomainEvent): void => {
    if (stopsContainers(event)) {
      for (const pod of event.pods) {
        this.stop(pod, event.t);
        // A crashed container's pod keeps its sandbox while it waits to restart; an ended pod's goes.
        if (event.kind !== "ContainerCrashed") this.sandboxes.get(pod.node)?.delete(pod.uid);
      }
      if (event.kind === "WorkloadFailed" && event.cause.kind === "Evicted")
        this.evictions.set(event.cause.node, (this.evictions.get(event.cause.node) ?? 0) + 1);
      return;
    }
    switch (event.kind) {
      case "RankFailed":
        // One rank of a gang failed: its container has stopped, and its pod with it; the others run on.
        this.stop(event.pod, event.t);
        this.sandboxes.get(event.pod.node)?.delete(event.pod.uid);
        return;
      case "WorkloadStarted":
        // Admitted: the kubelet starts the pod's sandbox, then pulls its image.
        for (const pod of event.pods) {
          let onNode = this.sandboxes.get(pod.node);
          if (onNode === undefined) {
            onNode = new Set();
            this.sandboxes.set(pod.node, onNode);
          }
          onNode.add(pod.uid);
        }
        this.start(event.workload, event.pods, 0, event.t);
        return;
      case "ContainerRestarted":
        this.start(event.workload, event.pods, event.restarts, event.t);
        return;
      case "NodeReady":
        this.readyAt.set(event.node, event.t);
        this.reboots.set(event.node, (this.reboots.get(event.node) ?? 0) + 1);
        this.stopped.delete(event.node);
        // The kubelet started again: its counters with it.
        this.evictions.delete(event.node);
        return;
      default:
        return;
    }
  };

  /** The containers running on `node` at `t` (simulated ms); its callers leave out a rebooting node. */
  on(node: string, t: number): NodeContainer[] {
    const out: NodeContainer[] = [];
    const restarts = this.reboots.get(node) ?? 0;
    let system = this.systemNow.get(node);
    if (system === undefined || system.restarts !== restarts) {
      const ready = this.readyAt.get(node);
      system = {
        restarts,
        containers: (this.system.get(node) ?? []).map(({ pod, spec }) => this.systemContainer(pod, spec, restarts, ready)),
      };
      this.systemNow.set(node, system);
    }
    out.push(...system.containers);
    for (const container of this.workloads.get(node)?.values() ?? []) if (container.usage.from <= t) out.push(container);
    return out;
  }

  /** A user's pod's container stopped at `t`: what it used stays in its node's kernel counters. */
  private stop(pod: PodPlacement, t: number): void {
    const container = this.workloads.get(pod.node)?.get(pod.uid);
    if (container === undefined) return;
    // Its memory reached its limit (usage.ts): the kernel's OOM killer ended it.
    const oomKilled = container.usage.oom !== undefined && t >= container.usage.oom.atMs;
    const before = this.stoppedOn(pod.node);
    const memory = memoryUse(container.usage, t);
    this.stopped.set(pod.node, {
      cpuSeconds: before.cpuSeconds + cpuSeconds(container.usage, t),
      memoryBytes: before.memoryBytes + memory.rss + memory.cache,
      cacheBytes: before.cacheBytes + memory.cache,
      oomKills: before.oomKills + (oomKilled ? 1 : 0),
    });
    this.workloads.get(pod.node)?.delete(pod.uid);
  }

  /**
   * What the users' containers that have stopped on `node` used, since the node last came up
   * (the kernel's counters start again at boot); those still running are in `on`.
   */
  stoppedOn(node: string): Stopped {
    return this.stopped.get(node) ?? NOTHING_STOPPED;
  }

  /** The pods with a running sandbox on `node`: its system pods and the users' admitted, not ended. */
  runningPods(node: string): number {
    return (this.systemPods.get(node) ?? 0) + (this.sandboxes.get(node)?.size ?? 0);
  }

  /** The pods `node`'s kubelet evicted since it last started. */
  evictionsOn(node: string): number {
    return this.evictions.get(node) ?? 0;
  }

  /** When `node` last came up in the run (undefined: up since before it). */
  lastReady(node: string): number | undefined {
    return this.readyAt.get(node);
  }

  /** A user's pod's container on `node`, once it has started by `t`. */
  workloadContainer(node: string, podUid: string, t: number): NodeContainer | undefined {
    const container = this.workloads.get(node)?.get(podUid);
    return container !== undefined && container.usage.from <= t ? container : undefined;
  }

  /** A system pod's container since its node's `restarts`-th boot (made once: `systemNow` keeps it). */
  private systemContainer(pod: SystemPod, spec: SystemContainer, restarts: number, readyAt: number | undefined): NodeContainer {
    const cpuMilli = spec.requests?.cpuMilli ?? spec.limits?.cpuMilli ?? 0;
    const memoryBytes = spec.requests?.memoryBytes ?? spec.limits?.memoryBytes ?? 0;
    return {
      pod: { uid: pod.uid, name: pod.name, namespace: pod.workload.namespace, qos: qosClass(pod.workload.containers) },
      container: spec.name,
      image: spec.image,
      id: systemContainerId(pod.uid, spec.name, restarts),
      cpuRequestMilli: cpuMilli,
      cpuLimitMilli: spec.limits?.cpuMilli ?? 0,
      memoryLimitBytes: spec.limits?.memoryBytes ?? 0,
      usage: containerUsage(
        `${pod.uid}/${spec.name}/${restarts}`,
        SYSTEM_PROFILE,
        cpuMilli || UNREQUESTED.cpuMilli,
        memoryBytes || UNREQUESTED.memoryBytes,
        readyAt ?? pod.startedAt,
      ),
    };
  }
  /** Per node: its system containers since its last reboot. */
  private readonly systemNow = new Map<string, { readonly restarts: number; readonly containers: readonly NodeContainer[] }>();

  /** `t`: when the kubelet began (bind or restart); a container that runs out of memory is killed `oomAfterMs` after it. */
  private start(workload: WorkloadRef, pods: readonly PodPlacement[], restarts: number, t: number): void {
    for (const pod of pods) {
      const from = this.pulls.startOf(pod.uid)?.startsAtMs;
      if (from === undefined) continue;
      const gpus = pod.gpus.length;
      const cpuMilli = workload.cpuMilliPerGpu * gpus;
      const memoryBytes = workload.memoryBytesPerGpu * gpus;
      const id = workloadContainerId(pod.uid, restarts);
      const cpuLimitMilli = (workload.cpuLimitMilliPerGpu ?? 0) * gpus;
      let onNode = this.workloads.get(pod.node);
      if (onNode === undefined) {
        onNode = new Map();
        this.workloads.set(pod.node, onNode);
      }
      onNode.set(pod.uid, {
        // Run:ai's pods request CPU and memory and limit no CPU (memory at most): Burstable.
        pod: { uid: pod.uid, name: pod.name, namespace: workload.namespace, qos: "Burstable" },
        container: containerName(workload.type, workload.name),
        image: workload.image ?? "",
        id,
        cpuRequestMilli: cpuMilli,
        cpuLimitMilli: cpuLimitMilli,
        memoryLimitBytes: workload.memoryLimitBytes ?? 0,
        usage: containerUsage(
          id,
          WORKLOAD_PROFILES[workload.type],
          cpuMilli || UNREQUESTED.cpuMilli,
          memoryBytes || UNREQUESTED.memoryBytes,
          from,
          workload.oomAfterMs === undefined || workload.memoryLimitBytes === undefined
            ? undefined
            : { limitBytes: workload.memoryLimitBytes, atMs: t + workload.oomAfterMs },
          // A data loader starved of CPU runs at its limit, throttled, the whole time.
          dataWaitShare(workload) > 0 ? { limitMilli: cpuLimitMilli, needMilli: (workload.dataLoaderMilliPerGpu ?? 0) * gpus } : undefined,
        ),
      });
    }
  }
}
