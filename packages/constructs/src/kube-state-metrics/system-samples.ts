/**
 * kube-state-metrics' view of the system workloads (system-workloads.ts): their pods, with the
 * pod families the users' pods have, and their controllers (DaemonSets, Deployments and the
 * Deployments' ReplicaSets). A pod is Running for the whole run; while its node reboots the node
 * lifecycle controller marks it not Ready (its container statuses keep what was last posted), and
 * the kubelet restarts its containers in place when the node is back (restartCount + 1).
 * A Deployment's pods stay on their node through a reboot (its eviction after the 300 s
 * not-ready toleration is not modelled).
 */
import type { ClusterView, DomainEvent } from "@gpusynth/sim";
import { type SeriesColumns, SharedLabelSets, type TargetSeries } from "../catalogue.js";
import { stableHex } from "../noise.js";
import { replicaSetName, type System, type SystemPod, type SystemWorkload } from "../system-workloads.js";
import { KSM } from "./families.js";
import { objectUid } from "./sharding.js";
import { CONDITION_STATUSES, imageId, PHASES, POD_STATUS_REASONS } from "./values.js";

/** A controller object kube-state-metrics serves families of: a DaemonSet, a Deployment, or a Deployment's ReplicaSet. */
interface ControllerObject {
  readonly kind: "DaemonSet" | "Deployment" | "ReplicaSet";
  readonly workload: SystemWorkload;
  /** The kube-state-metrics shard its UID hashes to. */
  readonly shard: number;
  readonly pods: readonly SystemPod[];
  made?: { readonly key: string; readonly series: SeriesColumns };
}

export class SystemWorkloadSamples {
  private readonly pods: readonly SystemPod[];
  /** Each pod's kube-state-metrics shard, by its place in `pods`: worked out once (115,000 pods on hyperscale.yaml). */
  private readonly podShards: readonly number[];
  /** Each controller object with its workload's pods, and its series with the state they were made from. */
  private readonly controllers: readonly ControllerObject[];
  /** When the first system pod was created: the controllers' creation (simulated ms). */
  private readonly installedAt: number;
  /** Each node's completed reboots: its system pods' containers restarted once per reboot. */
  private readonly reboots = new Map<string, number>();
  /** Each pod's series, with the state they were made from. */
  private readonly made = new Map<string, { readonly key: string; readonly series: SeriesColumns }>();

  /** `shardOf`: the kube-state-metrics shard of an object's UID. */
  constructor(system: System, shardOf: (uid: string) => number) {
    this.pods = system.pods;
    this.podShards = system.pods.map((pod) => shardOf(pod.uid));
    // A StatefulSet has no object here: kube-state-metrics serves no statefulsets (its --resources, signals/kube-state-metrics.md).
    this.controllers = system.workloads.flatMap((workload): ControllerObject[] => {
      const pods = system.pods.filter((p) => p.workload === workload);
      const object = (kind: ControllerObject["kind"], name: string) => ({
        kind,
        workload,
        shard: shardOf(objectUid(kind, workload.namespace, name)),
        pods,
      });
      if (workload.kind === "DaemonSet") return [object("DaemonSet", workload.name)];
      if (workload.kind === "Deployment") return [object("Deployment", workload.name), object("ReplicaSet", replicaSetName(workload))];
      return [];
    });
    this.installedAt = this.pods.reduce((min, p) => Math.min(min, p.createdAt), 0);
  }

  readonly record = (event: DomainEvent): void => {
    if (event.kind === "NodeReady") this.reboots.set(event.node, (this.reboots.get(event.node) ?? 0) + 1);
  };

  /**
   * Every system pod's and controller's series at the view's time, each into the list `served`
   * holds for its kube-state-metrics shard (none: not collected); `seconds` stamps a simulated
   * time as Unix seconds.
   */
  collect(view: ClusterView, seconds: (simulatedMs: number) => number, served: ReadonlyArray<TargetSeries | undefined>): void {
    const rebooting = new Set<string>();
    for (const pool of view.pools) for (const node of pool.nodes) if (node.status === "rebooting") rebooting.add(node.name);
    for (let i = 0; i < this.pods.length; i++) {
      const out = served[this.podShards[i] as number];
      if (out === undefined) continue;
      const pod = this.pods[i] as SystemPod;
      const down = rebooting.has(pod.node);
      const restarts = this.reboots.get(pod.node) ?? 0;
      const key = down ? `down|${restarts}` : `up|${restarts}`;
      let made = this.made.get(pod.uid);
      if (made === undefined || made.key !== key) {
        made = { key, series: podSeries(pod, down, restarts, seconds) };
        this.made.set(pod.uid, made);
      }
      out.keep(made.series);
    }
    for (const controller of this.controllers) {
      const out = served[controller.shard];
      if (out === undefined) continue;
      const ready = controller.pods.reduce((n, p) => (rebooting.has(p.node) ? n : n + 1), 0);
      const key = String(ready);
      if (controller.made?.key !== key) {
        controller.made = { key, series: controllerSeries(controller, ready, Math.floor(seconds(this.installedAt))) };
      }
      out.keep(controller.made.series);
    }
  }
}

function podSeries(pod: SystemPod, rebooting: boolean, restarts: number, seconds: (simulatedMs: number) => number): SeriesColumns {
  const shared = new SharedLabelSets();
  const w = pod.workload;
  const base = { namespace: w.namespace, pod: pod.name, uid: pod.uid };
  shared.add(
    KSM.podInfo,
    {
      ...base,
      host_ip: pod.hostIp,
      pod_ip: pod.ip,
      node: pod.node,
      created_by_kind: pod.owner.kind,
      created_by_name: pod.owner.name,
      priority_class: w.priorityClass,
      host_network: String(w.hostNetwork),
    },
    1,
  );
  for (const phase of PHASES) shared.add(KSM.podStatusPhase, { ...base, phase }, phase === "Running" ? 1 : 0);
  for (const reason of POD_STATUS_REASONS) shared.add(KSM.podStatusReason, { ...base, reason }, 0);
  shared.add(KSM.podOwner, { ...base, owner_kind: pod.owner.kind, owner_name: pod.owner.name, owner_is_controller: "true" }, 1);
  // No label of the allowlist (project, runai/queue, user): the series carries only the pod's identity.
  shared.add(KSM.podLabels, base, 1);
  for (const condition of CONDITION_STATUSES) shared.add(KSM.podScheduled, { ...base, condition }, condition === "true" ? 1 : 0);
  const ready = rebooting ? "false" : "true";
  for (const condition of CONDITION_STATUSES) shared.add(KSM.podReady, { ...base, condition }, condition === ready ? 1 : 0);
  for (const c of w.containers) {
    const container = { ...base, container: c.name };
    shared.add(
      KSM.containerInfo,
      {
        ...container,
        image_spec: c.image,
        image: c.image,
        image_id: imageId(c.image),
        container_id: `containerd://${stableHex(`container/${pod.uid}/${c.name}/${restarts}`, 8)}`,
      },
      1,
    );
    shared.add(KSM.podRestarts, container, restarts, pod.createdAt);
    shared.add(KSM.containerReady, container, 1);
    shared.add(KSM.containerRunning, container, 1);
    shared.add(KSM.containerWaiting, container, 0);
    shared.add(KSM.containerTerminated, container, 0);
    const resource = { ...container, node: pod.node };
    if (c.requests?.cpuMilli !== undefined)
      shared.add(KSM.podResourceRequests, { ...resource, resource: "cpu", unit: "core" }, c.requests.cpuMilli / 1000);
    if (c.requests?.memoryBytes !== undefined)
      shared.add(KSM.podResourceRequests, { ...resource, resource: "memory", unit: "byte" }, c.requests.memoryBytes);
    if (c.limits?.cpuMilli !== undefined)
      shared.add(KSM.podResourceLimits, { ...resource, resource: "cpu", unit: "core" }, c.limits.cpuMilli / 1000);
    if (c.limits?.memoryBytes !== undefined)
      shared.add(KSM.podResourceLimits, { ...resource, resource: "memory", unit: "byte" }, c.limits.memoryBytes);
  }
  shared.add(KSM.podCreated, base, Math.floor(seconds(pod.createdAt)));
  shared.add(KSM.podStartTime, base, Math.floor(seconds(pod.startedAt)));
  return shared.series;
}

/** A percentage of a replica count as the rolling update applies it (intstr.GetScaledValueFromIntOrPercent). */
function scaled(value: number | `${number}%`, replicas: number, roundUp: boolean): number {
  if (typeof value === "number") return value;
  const exact = (Number.parseFloat(value) * replicas) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** A controller's series: `ready` of its pods on nodes that are up (a DaemonSet's desired are its pods, a Deployment's its replicas). */
function controllerSeries(controller: ControllerObject, ready: number, createdS: number): SeriesColumns {
  const shared = new SharedLabelSets();
  const w = controller.workload;
  if (controller.kind === "ReplicaSet") {
    shared.add(
      KSM.replicaSetOwner,
      {
        namespace: w.namespace,
        replicaset: replicaSetName(w),
        owner_kind: "Deployment",
        owner_name: w.name,
        owner_is_controller: "true",
      },
      1,
    );
    return shared.series;
  }
  if (controller.kind === "DaemonSet") {
    const labels = { namespace: w.namespace, daemonset: w.name };
    const desired = controller.pods.length;
    shared.add(KSM.daemonSetCreated, labels, createdS);
    shared.add(KSM.daemonSetCurrent, labels, desired);
    shared.add(KSM.daemonSetDesired, labels, desired);
    shared.add(KSM.daemonSetAvailable, labels, ready);
    shared.add(KSM.daemonSetMisscheduled, labels, 0);
    shared.add(KSM.daemonSetReady, labels, ready);
    shared.add(KSM.daemonSetUnavailable, labels, desired - ready);
    shared.add(KSM.daemonSetObservedGeneration, labels, 1);
    shared.add(KSM.daemonSetUpdated, labels, desired);
    shared.add(KSM.daemonSetGeneration, labels, 1);
    return shared.series;
  }
  const labels = { namespace: w.namespace, deployment: w.name };
  const replicas = w.replicas ?? 1;
  const maxUnavailable = w.rollingUpdate === undefined ? 0 : scaled(w.rollingUpdate.maxUnavailable, replicas, false);
  // Available while at least replicas − maxUnavailable are (the deployment controller's MinimumReplicasAvailable).
  const available = ready >= replicas - maxUnavailable ? "true" : "false";
  shared.add(KSM.deploymentCreated, labels, createdS);
  shared.add(KSM.deploymentReplicas, labels, replicas);
  shared.add(KSM.deploymentReady, labels, ready);
  shared.add(KSM.deploymentAvailable, labels, ready);
  shared.add(KSM.deploymentUnavailable, labels, replicas - ready);
  shared.add(KSM.deploymentUpdated, labels, replicas);
  shared.add(KSM.deploymentObservedGeneration, labels, 1);
  for (const [condition, status] of [
    ["Available", available],
    ["Progressing", "true"],
  ] as const)
    for (const s of CONDITION_STATUSES) shared.add(KSM.deploymentCondition, { ...labels, condition, status: s }, s === status ? 1 : 0);
  shared.add(KSM.deploymentSpecReplicas, labels, replicas);
  shared.add(KSM.deploymentPaused, labels, 0);
  if (w.rollingUpdate !== undefined) {
    shared.add(KSM.deploymentMaxUnavailable, labels, maxUnavailable);
    shared.add(KSM.deploymentMaxSurge, labels, scaled(w.rollingUpdate.maxSurge, replicas, true));
  }
  shared.add(KSM.deploymentGeneration, labels, 1);
  return shared.series;
}
