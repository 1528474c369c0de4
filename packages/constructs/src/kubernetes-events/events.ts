/**
 * Kubernetes events for the simulated cluster's workloads, as the collector's k8s_events
 * receiver delivers them (opentelemetry-collector-contrib receiver/k8seventsreceiver, v0.145.0
 * line @c274a008): one log record per Event write (create or count patch). Who records what:
 * - KAI-Scheduler (component kai-scheduler, legacy recorder, no host): Pipelined (a preemptor's
 *   pods, every cycle while its victims terminate), Scheduled and Unschedulable on pods,
 *   Unschedulable on pod groups (every cycle while a workload waits: the recorder's dedup and
 *   spam filter decide what is written), Evict on the
 *   victim's pod group (pkg/scheduler/cache/status_updater/default_status_updater.go,
 *   framework/statement.go, actions/common/allocate.go @5d35ecab);
 * - the KAI binder (component binder): Bound (pkg/binder/controllers/bindrequest_controller.go);
 * - the kubelet (component kubelet, host = node): Created and Started when a pod starts, Killing
 *   when a running pod is deleted (preemption, cancellation)
 *   (pkg/kubelet/kuberuntime/kuberuntime_container.go), BackOff at every pod sync while a failed
 *   container waits to restart in place, then Pulled/Created/Started again
 *   (kuberuntime_manager.go doBackOff), Rebooted and NodeReady on the Node when it comes back
 *   (pkg/kubelet/nodestatus/setters.go); under memory pressure EvictionThresholdMet and
 *   NodeHasInsufficientMemory on the Node, Evicted on the evicted pod and Killing as its
 *   containers stop (pkg/kubelet/eviction/eviction_manager.go, helpers.go), and
 *   NodeHasSufficientMemory when the pressure is over;
 * - the node-lifecycle controller (component node-controller): NodeNotReady when a node goes down.
 * Message templates are verbatim; documented in signals/kubernetes-events.md with the log fields.
 */
import {
  type DomainEvent,
  type PendingReason,
  type PodPlacement,
  podGroupName,
  type QueueState,
  unhandledEvent,
  unixMs,
  type WorkloadRef,
} from "@gpusynth/sim";
import type { LogRecordOut } from "../catalogue.js";
import type { StampClock } from "../clock.js";
import { queueResourceText } from "../kai-scheduler/values.js";
import type { ImagePulls, Images } from "../kubelet/image-pulls.js";
import { containerName, queueName } from "../naming.js";
import { stableUuid, unitHash } from "../noise.js";
import { type EventInput, EventRecorder, type EventWrite, type InvolvedObject } from "./event-recorder.js";

export const K8S_EVENTS_SCOPE = {
  name: "github.com/open-telemetry/opentelemetry-collector-contrib/receiver/k8seventsreceiver",
  version: "0.145.0",
};

const KAI = { component: "kai-scheduler", host: "" };
const BINDER = { component: "binder", host: "" };
const NODE_CONTROLLER = { component: "node-controller", host: "" };

/** k8s_events maps the event type to a severity: Normal → INFO (9), Warning → WARN (13). */
const SEVERITY = { Normal: 9, Warning: 13 } as const;

function podObject(w: WorkloadRef, pod: { name: string; uid: string }, fieldPath = ""): InvolvedObject {
  return { kind: "Pod", apiVersion: "v1", namespace: w.namespace, name: pod.name, uid: pod.uid, fieldPath };
}

/** The kubelet's node reference: kind Node, the node's name as its UID, no API version (kubelet.go). */
function nodeObject(node: string): InvolvedObject {
  return { kind: "Node", apiVersion: "", namespace: "", name: node, uid: node, fieldPath: "" };
}

/** A workload's PodGroup reference, made once per workload (its UID is a hash). */
function podGroupObject(w: WorkloadRef): InvolvedObject {
  let object = podGroupObjects.get(w);
  if (object === undefined) {
    object = {
      kind: "PodGroup",
      apiVersion: "scheduling.run.ai/v2alpha2",
      namespace: w.namespace,
      name: podGroupName(w),
      uid: stableUuid(`${w.uid}/podgroup`),
      fieldPath: "",
    };
    podGroupObjects.set(w, object);
  }
  return object;
}
const podGroupObjects = new WeakMap<WorkloadRef, InvolvedObject>();

/** Go's %v of a float64 GPU count: 8 → "8", 0.5 → "0.5". */
const n = (value: number | undefined) => String(value ?? 0);

/**
 * JobFitErrorsToMessage (common_info/job_errors.go): "<reason>: <message>." for one fit error;
 * the quota texts are GetBuildOverCapacityMessageForQueue / GetJobOverMaxAllowedMessageForQueue
 * (pkg/scheduler/api/unschedule_info.go). Resource-shortage messages come per pod.
 */
export function unschedulableMessage(reason: PendingReason, queue: string, nodesWithoutRoom: number): string {
  switch (reason.reason) {
    case "NonPreemptibleOverQuota":
      return `NonPreemptibleOverQuota: Non-preemptible workload is over quota. Workload requested ${n(reason.requested)} GPUs, but ${queue} quota is ${n(reason.deserved)} GPUs, while ${n(reason.allocatedNonPreemptible)} GPUs are already allocated for non-preemptible pods. Use a preemptible workload to go over quota..`;
    case "OverLimit":
      return `OverLimit: ${queue} quota has reached the allowable limit of GPUs. Limit is ${n(reason.limit)} GPUs, currently ${n(reason.allocated)} GPUs allocated and workload requested ${n(reason.requested)} GPUs.`;
    case "Unschedulable":
      // pod_errors.go, compact form: "no nodes with enough resources were found: <count> <reason>."
      return `no nodes with enough resources were found: ${nodesWithoutRoom} node(s) didn't have enough resources: GPUs.`;
  }
}

/**
 * The kubelet re-syncs a pod whose sync failed after its pod-worker back-off period, 10 s with
 * jitter factor 0.5 (pkg/kubelet/pod_workers.go, kubelet.go backOffPeriod); every sync during a
 * container's restart back-off records BackOff again. The first sync follows the container's
 * death within the PLEG relist period (1 s, pkg/kubelet/kubelet.go plegRelistPeriod).
 */
const POD_WORKER_BACKOFF_MS = 10_000;
const PLEG_RELIST_MS = 1_000;

interface CrashLoop {
  readonly workload: WorkloadRef;
  readonly pods: readonly PodPlacement[];
  readonly untilMs: number;
  /** The next pod sync (Unix ms) per pod, in step with `pods`. */
  readonly nextMs: number[];
  syncs: number;
}

interface Waiting {
  readonly workload: WorkloadRef;
  events: readonly EventInput[];
  /** The next scheduling cycle at which KAI records them again. */
  nextMs: number;
  /** Cycles since the last write whose recordings the spam filter dropped. */
  dropped: number;
  /**
   * A pipelined job's: recorded until its victims have terminated (Unix ms), then what it recorded
   * before (Unschedulable) if it still waits after that (a bind ends the waiting first).
   */
  until?: { readonly ms: number; readonly afterwards: readonly EventInput[] };
}

export class KubernetesEvents {
  private readonly recorder = new EventRecorder();
  private readonly waiting = new Map<number, Waiting>();
  private readonly pendingPods = new Map<number, ReadonlyArray<{ name: string; uid: string }>>();
  private readonly crashLoops = new Map<number, CrashLoop>();
  private out: LogRecordOut[] = [];

  constructor(
    private readonly startMs: number,
    private readonly schedulingPeriodMs: number,
    private readonly nodeCount: (pool: string) => number,
    private readonly clock: StampClock,
    private readonly images: Images,
    /** When each container starts, after any pull (shared with the metrics, which must agree); its owner feeds it first. */
    private readonly pulls: ImagePulls,
  ) {}

  /**
   * The kubelet's image events for a container start that `pulls` has worked out: "already present
   * on machine", or Pulling now and Pulled when the image is there (a pod that arrives while
   * another pod's pull runs waits for it). Returns when the container starts.
   */
  private pullImage(image: string | undefined, kubelet: EventInput["source"], ref: InvolvedObject, podUid: string, now: number): number {
    const spec = image === undefined ? undefined : this.images.get(image);
    const start = this.pulls.startOf(podUid);
    if (image === undefined || spec === undefined || start === undefined) return now;
    const quoted = JSON.stringify(image); // Go's %q
    if (start.present) {
      this.write(
        { source: kubelet, object: ref, type: "Normal", reason: "Pulled", message: `Container image ${quoted} already present on machine` },
        now,
      );
      return now;
    }
    const done = this.startMs + start.startsAtMs;
    this.write({ source: kubelet, object: ref, type: "Normal", reason: "Pulling", message: `Pulling image ${quoted}` }, now);
    // kuberuntime_image.go: the pull's own time, then with the wait for the serialized puller.
    this.write(
      {
        source: kubelet,
        object: ref,
        type: "Normal",
        reason: "Pulled",
        message: `Successfully pulled image ${quoted} in ${goDuration(start.pullMs)} (${goDuration(done - now)} including waiting). Image size: ${spec.sizeBytes} bytes.`,
      },
      done,
    );
    return done;
  }

  /** Feeds a domain event. */
  readonly record = (event: DomainEvent): void => {
    const now = this.startMs + event.t;
    switch (event.kind) {
      case "WorkloadPipelined": {
        // Statement.Commit pipelines the preemptor onto its victims' GPUs (commitPipeline records
        // Pipelined, statement.go:429); every cycle until they are gone allocate pipelines it
        // again and records it again; it binds once they are gone.
        const events: EventInput[] = event.pods.map((pod) => ({
          source: KAI,
          object: podObject(event.workload, pod),
          type: "Normal",
          reason: "Pipelined",
          message: `Pod ${event.workload.namespace}/${pod.name} was pipelined to node ${pod.node}`,
        }));
        this.startWaiting(event.workload, events, now, this.startMs + event.until);
        return;
      }
      case "WorkloadStarted": {
        this.stopWaiting(event.workload.id, now);
        for (const pod of event.pods) {
          this.write(
            {
              source: KAI,
              object: podObject(event.workload, pod),
              type: "Normal",
              reason: "Scheduled",
              message: `Successfully assigned pod ${event.workload.namespace}/${pod.name} to node ${pod.node} at node-pool ${event.nodePool}`,
            },
            now,
          );
          this.write(
            {
              source: BINDER,
              object: podObject(event.workload, pod),
              type: "Normal",
              reason: "Bound",
              message: `Pod bound successfully to node ${pod.node}`,
            },
            now,
          );
          this.startContainer(event.workload, pod, now);
        }
        return;
      }
      case "ContainerCrashed":
        this.crashLoops.set(event.workload.id, {
          workload: event.workload,
          pods: event.pods,
          untilMs: now + event.backoffMs,
          nextMs: event.pods.map(() => now + PLEG_RELIST_MS),
          syncs: 0,
        });
        return;
      case "ContainerRestarted":
        this.backOffUntil(event.workload.id, now);
        this.crashLoops.delete(event.workload.id);
        for (const pod of event.pods) this.startContainer(event.workload, pod, now);
        return;
      case "NodeRebootStarted":
        // The node stops posting status; the node-lifecycle controller marks it NotReady.
        this.write(
          {
            source: NODE_CONTROLLER,
            object: nodeObject(event.node),
            type: "Normal",
            reason: "NodeNotReady",
            message: `Node ${event.node} status is now: NodeNotReady`,
          },
          now,
        );
        return;
      case "NodeReady": {
        // The kubelet starts (BirthCry, kubelet.go:2929), its container manager enforces node
        // allocatable (cm/node_container_manager_linux.go:105), and its first status update
        // (kubelet_node_status.go defaultNodeStatusFuncs, in their order) reports the new boot id
        // (nodestatus MachineInfo), the pressure conditions leaving the Unknown the node lifecycle
        // controller set (setters.go:638, 760, 699) and Ready (setters.go:577); Kubernetes v1.30.2.
        const kubelet = { component: "kubelet", host: event.node };
        const bootId = stableUuid(`boot/${event.node}/${event.t}`);
        const node = nodeObject(event.node);
        this.write({ source: kubelet, object: node, type: "Normal", reason: "Starting", message: "Starting kubelet." }, now);
        this.write(
          {
            source: kubelet,
            object: node,
            type: "Normal",
            reason: "NodeAllocatableEnforced",
            message: "Updated Node Allocatable limit across pods",
          },
          now,
        );
        this.write(
          {
            source: kubelet,
            object: nodeObject(event.node),
            type: "Warning",
            reason: "Rebooted",
            message: `Node ${event.node} has been rebooted, boot id: ${bootId}`,
          },
          now,
        );
        for (const status of ["NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"])
          this.nodeStatus(event.node, status, now);
        return;
      }
      case "NodeMemoryPressure":
        this.memoryPressure(event, now);
        return;
      case "NodeMemoryPressureRelieved":
        this.nodeStatus(event.node, "NodeHasSufficientMemory", now);
        return;
      case "WorkloadUnschedulable":
        this.pendingPods.set(event.workload.id, event.pods);
        this.unschedulable(event.workload, event.reasons, now);
        return;
      case "WorkloadPreempted":
        this.endCrashLoop(event.workload.id, now);
        for (const pod of event.pods) {
          this.write(
            {
              source: KAI,
              object: podGroupObject(event.workload),
              type: "Normal",
              reason: "Evict",
              message: evictionMessage(event.workload, pod, event.action, event.preemptor, event.victimQueue, event.preemptorQueue),
            },
            now,
          );
        }
        this.killed(event.workload, event.pods, now);
        for (const pod of event.pods) this.recorder.forget(pod.uid);
        this.forgetPods(event.workload);
        return;
      case "WorkloadCancelled":
        this.endCrashLoop(event.workload.id, now);
        this.stopWaiting(event.workload.id, now);
        this.killed(event.workload, event.pods, now);
        for (const pod of event.pods) this.recorder.forget(pod.uid);
        this.recorder.forget(podGroupObject(event.workload).uid);
        this.forgetPods(event.workload);
        return;
      case "RankFailed":
        // A rank the kubelet evicted is killed; one whose process died has nothing more to say.
        if (event.cause.kind === "Evicted") this.killed(event.workload, [event.pod], now);
        this.recorder.forget(event.pod.uid);
        return;
      case "WorkloadCompleted":
      case "WorkloadFailed":
        if (event.kind === "WorkloadFailed" && event.staleGang !== undefined) {
          // KAI's StaleGangEviction evicts the ranks still running (status updater's Evicted:
          // an Evict event on the pod group per pod, GetGangEvictionMessage's text), and they die.
          for (const pod of event.pods)
            this.write(
              {
                source: KAI,
                object: podGroupObject(event.workload),
                type: "Normal",
                reason: "Evict",
                message: `Workload doesn't meet the minimum required number of pods (${event.staleGang.minMember}), evicting remaining pod: ${event.workload.namespace}/${pod.name}`,
              },
              now,
            );
          this.killed(event.workload, event.pods, now);
        } else if (event.kind === "WorkloadFailed" && event.cause.kind === "Evicted") {
          // An eviction kills the pod's containers; the job's other pods are deleted with it.
          this.killed(event.workload, event.pods, now);
        }
        this.endCrashLoop(event.workload.id, now);
        this.stopWaiting(event.workload.id, now);
        for (const pod of event.pods) this.recorder.forget(pod.uid);
        this.recorder.forget(podGroupObject(event.workload).uid);
        this.forgetPods(event.workload);
        return;
      case "WorkloadSubmitted":
        return;
      // Kinds this fold ignores, listed so that a new kind is a compile error until decided here.
      // No Kubernetes object hears of a power cap: only the GPU's own readings show it.
      case "GpuPowerCap":
      case "GpuFault":
      case "GpuResetStarted":
      case "GpuResetCompleted":
      case "SchedulingCycle":
        return;
      case "NodeCordoned":
        // The kubelet sees spec.unschedulable at its next status update (kubelet_node_status.go:694).
        this.nodeStatus(event.node, "NodeNotSchedulable", now);
        return;
      default:
        unhandledEvent(event);
    }
  };

  /**
   * Everything written up to `nowMs` (Unix ms), including KAI's per-cycle re-recording of
   * Unschedulable (or Pipelined) for workloads still waiting, which the spam filter thins out.
   */
  drain(nowMs: number): LogRecordOut[] {
    for (const id of this.crashLoops.keys()) this.backOffUntil(id, nowMs);
    for (const [id, waiting] of this.waiting) this.rerecord(id, waiting, nowMs + 1);
    const out = this.out;
    this.out = [];
    return out.sort((a, b) => a.timeMs - b.timeMs);
  }

  /**
   * KAI's re-recordings of a waiting workload's events in the cycles before `beforeMs` (Unix ms):
   * up to a drain, or up to the event that ends or replaces the waiting, whenever it is drained.
   */
  private rerecord(id: number, waiting: Waiting, beforeMs: number): void {
    while (waiting.nextMs < beforeMs) {
      if (waiting.until !== undefined && waiting.nextMs >= waiting.until.ms) {
        // The victims are gone: back to what it recorded before, or to nothing.
        waiting.events = waiting.until.afterwards;
        waiting.until = undefined;
        waiting.dropped = 0;
        if (waiting.events.length === 0) {
          this.waiting.delete(id);
          return;
        }
      }
      let next = Number.POSITIVE_INFINITY;
      for (const input of waiting.events) {
        this.write(input, waiting.nextMs, waiting.dropped + 1);
        next = Math.min(next, this.recorder.nextAllowedMs(input, waiting.nextMs));
      }
      // Cycles in which the filter would drop every recording are skipped, but counted.
      const period = this.schedulingPeriodMs;
      const following = Math.ceil(Math.max(waiting.nextMs + period, next) / period) * period;
      waiting.dropped = Math.round((following - waiting.nextMs) / period) - 1;
      waiting.nextMs = following;
    }
  }

  /**
   * KAI records `events` now and again every cycle while the workload waits, in place of what it
   * recorded before; a pipelined job's until its victims are gone (`untilMs`), then what it
   * recorded before again.
   */
  private startWaiting(w: WorkloadRef, events: readonly EventInput[], now: number, untilMs?: number): void {
    const before = this.stopWaiting(w.id, now);
    for (const input of events) this.write(input, now);
    this.waiting.set(w.id, {
      workload: w,
      events,
      nextMs: Math.ceil((now + 1) / this.schedulingPeriodMs) * this.schedulingPeriodMs,
      dropped: 0,
      ...(untilMs === undefined ? {} : { until: { ms: untilMs, afterwards: before } }),
    });
  }

  /** Ends a workload's waiting at `nowMs`: the cycles before it re-recorded, then nothing more. */
  private stopWaiting(id: number, nowMs: number): readonly EventInput[] {
    const waiting = this.waiting.get(id);
    if (waiting === undefined) return [];
    this.rerecord(id, waiting, nowMs);
    this.waiting.delete(id);
    return waiting.until?.afterwards ?? waiting.events;
  }

  private unschedulable(w: WorkloadRef, reasons: readonly PendingReason[], now: number): void {
    const first = reasons[0];
    const pods = this.pendingPods.get(w.id) ?? [];
    if (first === undefined || pods.length === 0) return;
    const queue = queueName({ name: first.queue ?? w.project, pool: first.nodePool });
    const message = unschedulableMessage(first, queue, this.nodeCount(first.nodePool));
    // default_status_updater.go records the job's message on the pod group (Normal) and on each
    // pending pod (Warning) the pod's own fit error, else the job's message. For a shortage of
    // resources the job's message names the pod that did not fit (actions/common/allocate.go);
    // quota reasons have no pod-level error.
    let groupMessage = message;
    let failedPod = -1;
    if (first.reason === "Unschedulable") {
      const gang = pods.length > 1;
      failedPod = gang ? Math.min(first.podsPlaced ?? 0, pods.length - 1) : 0;
      const pod = pods[failedPod] as { name: string };
      groupMessage = gang
        ? `PodSchedulingErrors: Resources were found for ${failedPod} pods while ${pods.length} are required for gang scheduling. Additional pods cannot be scheduled due to: ${message}.`
        : `PodSchedulingErrors: Resources were not found for pod ${w.namespace}/${pod.name} due to: ${message}.`;
    }
    const events: EventInput[] = pods.map((pod, i) => ({
      source: KAI,
      object: podObject(w, pod),
      type: "Warning",
      reason: "Unschedulable",
      message: i === failedPod ? message : groupMessage,
    }));
    events.push({ source: KAI, object: podGroupObject(w), type: "Normal", reason: "Unschedulable", message: groupMessage });
    this.startWaiting(w, events, now);
  }

  /** The kubelet's node status events: `Node <name> status is now: <event>` (kubelet_node_status.go recordNodeStatusEvent). */
  private nodeStatus(node: string, status: string, now: number): void {
    this.write(
      {
        source: { component: "kubelet", host: node },
        object: nodeObject(node),
        type: "Normal",
        reason: status,
        message: `Node ${node} status is now: ${status}`,
      },
      now,
    );
  }

  private memoryPressure(event: DomainEvent & { kind: "NodeMemoryPressure" }, now: number): void {
    const kubelet = { component: "kubelet", host: event.node };
    this.write(
      {
        source: kubelet,
        object: nodeObject(event.node),
        type: "Warning",
        reason: "EvictionThresholdMet",
        message: "Attempting to reclaim memory",
      },
      now,
    );
    this.nodeStatus(event.node, "NodeHasInsufficientMemory", now);
    const victim = event.victim;
    if (victim === null) return;
    // evictionMessage (helpers.go): the fragments keep their trailing spaces; the request is the
    // container's memory request as a resource.Quantity.
    const container = containerName(victim.workload.type, victim.workload.name);
    const request = victim.workload.memoryBytesPerGpu * victim.pod.gpus.length;
    const message =
      "The node was low on resource: memory. " +
      `Threshold quantity: ${binaryQuantity(event.thresholdBytes)}, available: ${binaryQuantity(event.availableBytes)}. ` +
      `Container ${container} was using ${binaryQuantity(victim.usageBytes)}, request is ${binaryQuantity(request)}, has larger consumption of memory. `;
    this.write({ source: kubelet, object: podObject(victim.workload, victim.pod), type: "Warning", reason: "Evicted", message }, now);
  }

  /** The kubelet pulls the image if the node lacks it (images/image_manager.go), then starts the container (kuberuntime_container.go startContainer). */
  private startContainer(w: WorkloadRef, pod: PodPlacement, now: number): void {
    const container = containerName(w.type, w.name);
    const kubelet = { component: "kubelet", host: pod.node };
    const ref = podObject(w, pod, `spec.containers{${container}}`);
    const startedAt = this.pullImage(w.image, kubelet, ref, pod.uid, now);
    this.write({ source: kubelet, object: ref, type: "Normal", reason: "Created", message: `Created container ${container}` }, startedAt);
    this.write({ source: kubelet, object: ref, type: "Normal", reason: "Started", message: `Started container ${container}` }, startedAt);
  }

  /** BackOff at each pod sync of a crash loop up to `nowMs` (and before the restart). */
  private backOffUntil(id: number, nowMs: number): void {
    const loop = this.crashLoops.get(id);
    if (loop === undefined) return;
    const w = loop.workload;
    const container = containerName(w.type, w.name);
    loop.pods.forEach((pod, i) => {
      const input: EventInput = {
        source: { component: "kubelet", host: pod.node },
        object: podObject(w, pod, `spec.containers{${container}}`),
        type: "Warning",
        reason: "BackOff",
        // format.Pod: <name>_<namespace>(<uid>)
        message: `Back-off restarting failed container ${container} in pod ${pod.name}_${w.namespace}(${pod.uid})`,
      };
      while ((loop.nextMs[i] as number) < Math.min(nowMs + 1, loop.untilMs)) {
        this.write(input, loop.nextMs[i] as number);
        loop.syncs++;
        loop.nextMs[i] = (loop.nextMs[i] as number) + Math.round(POD_WORKER_BACKOFF_MS * (1 + 0.5 * unitHash(pod.uid, loop.syncs)));
      }
    });
  }

  private endCrashLoop(id: number, now: number): void {
    this.backOffUntil(id, now);
    this.crashLoops.delete(id);
  }

  private killed(w: WorkloadRef, pods: readonly PodPlacement[], now: number): void {
    const container = containerName(w.type, w.name);
    for (const pod of pods) {
      this.write(
        {
          source: { component: "kubelet", host: pod.node },
          object: podObject(w, pod, `spec.containers{${container}}`),
          type: "Normal",
          reason: "Killing",
          message: `Stopping container ${container}`,
        },
        now,
      );
    }
  }

  private forgetPods(w: WorkloadRef): void {
    for (const pod of this.pendingPods.get(w.id) ?? []) this.recorder.forget(pod.uid);
    this.pendingPods.delete(w.id);
  }

  private write(input: EventInput, nowMs: number, observations = 1): void {
    const written = this.recorder.record(input, nowMs, observations);
    if (written !== undefined)
      this.out.push(toLogRecord(written, this.clock(written.firstMs), this.clock(written.lastMs), this.resourceOf(written)));
  }

  /**
   * The record's resource, one object per reporting host and involved object (its uid names its
   * kind, name and API version): a pod's events share it, so the logs pipeline finds its provider
   * by the object instead of serialising a new one for each record. The most recent objects are
   * kept: past RESOURCES_KEPT the cache starts again, and an object met again gets a new one.
   */
  private resourceOf(e: EventWrite): Readonly<Record<string, string>> {
    const key = `${e.source.host}\u0000${e.object.uid}\u0000${e.object.fieldPath}`;
    let resource = this.resources.get(key);
    if (resource === undefined) {
      if (this.resources.size >= RESOURCES_KEPT) this.resources.clear();
      resource = eventResource(e);
      this.resources.set(key, resource);
    }
    return resource;
  }
  private readonly resources = new Map<string, Readonly<Record<string, string>>>();
}

/**
 * Resources kept (KubernetesEvents.resourceOf). A day of platform.yaml's events is about 98,000
 * records on 20,000 resources, and an object's events come close together (scheduled, pulled,
 * started; killed): the last few thousand serve nearly every record.
 */
const RESOURCES_KEPT = 4096;

function evictionMessage(
  victim: WorkloadRef,
  pod: PodPlacement,
  action: "reclaim" | "preempt",
  preemptor: WorkloadRef,
  victimQueue: QueueState,
  preemptorQueue: QueueState,
): string {
  const by = `${preemptor.namespace}/${podGroupName(preemptor)}`;
  if (action === "preempt") return `Pod ${victim.namespace}/${pod.name} was preempted by higher priority workload ${by}`;
  // Queues carry GPU quotas only: their CPU and memory quotas are unlimited.
  const detail = (q: QueueState) =>
    `${queueName({ name: q.name, pool: q.nodePool })} uses <${queueResourceText(q.allocated, q.allocatedCpuMilli, q.allocatedMemoryBytes)}> with a quota of <${queueResourceText(q.deserved, -1, -1)}>, fair-share of <${queueResourceText(q.fairShare, q.fairShareCpuMilli, q.fairShareMemoryBytes)}> and queue priority of <100>.`;
  return `Pod ${victim.namespace}/${pod.name} was preempted by workload ${by}.\n${detail(victimQueue)}\n${detail(preemptorQueue)}`;
}

/** Go's time.Duration String of a millisecond-truncated duration: "890ms", "27.88s", "1m5.5s", "1h2m3s". */
export function goDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const sec = (ms % 60_000) / 1000;
  const seconds = `${Number(sec.toFixed(3))}s`;
  return `${h > 0 ? `${h}h` : ""}${h > 0 || m > 0 ? `${m}m` : ""}${seconds}`;
}

/**
 * resource.Quantity's canonical string of a BinarySI byte count: the largest binary suffix
 * that divides it exactly ("100Mi", "41208Ki"), else the plain number.
 */
export function binaryQuantity(bytes: number): string {
  const suffixes = ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"];
  for (const [i, suffix] of suffixes.entries()) {
    const unit = 2 ** (10 * (suffixes.length - i));
    if (bytes >= unit && bytes % unit === 0) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}

/**
 * Go's time.String() of a whole-second UTC time: "2026-01-05 00:00:01 +0000 UTC". The last
 * second's text is kept: records come in time order, many within a second.
 */
function goTimeString(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastGoTime.second)
    lastGoTime = { second, text: `${new Date(second * 1000).toISOString().replace("T", " ").replace(".000Z", "")} +0000 UTC` };
  return lastGoTime.text;
}
let lastGoTime = { second: Number.NaN, text: "" };

/** The k8s_events receiver's resource for the object an Event write is about (k8s_event_to_logdata.go). */
function eventResource(e: EventWrite): Readonly<Record<string, string>> {
  return {
    "k8s.node.name": e.source.host,
    "k8s.object.kind": e.object.kind,
    "k8s.object.name": e.object.name,
    "k8s.object.uid": e.object.uid,
    "k8s.object.fieldpath": e.object.fieldPath,
    "k8s.object.api_version": e.object.apiVersion,
    // The involved object's resourceVersion at recording time: a modelled etcd revision.
    "k8s.object.resource_version": String(1_000_000 + Math.floor(unitHash(e.object.uid) * 9_000_000)),
  };
}

/**
 * The k8s_events receiver's record for one Event write (k8s_event_to_logdata.go), with its
 * resource; its first and last times on the consumers' clock.
 */
function toLogRecord(e: EventWrite, firstMs: number, lastMs: number, resource: Readonly<Record<string, string>>): LogRecordOut {
  const uid = stableUuid(`event/${e.name}`);
  const attributes: Record<string, string | number> = {
    "k8s.event.reason": e.reason,
    "k8s.event.action": "",
    "k8s.event.start_time": goTimeString(firstMs),
    "k8s.event.name": e.name,
    "k8s.event.uid": uid,
    "k8s.namespace.name": e.object.namespace,
  };
  if (e.count !== 0) attributes["k8s.event.count"] = e.count;
  return {
    area: "kubernetes-events",
    receiver: "k8s_events",
    resource,
    // Legacy events carry no eventTime: the receiver takes lastTimestamp (whole seconds).
    timeMs: unixMs(Math.floor(lastMs / 1000) * 1000),
    severityNumber: SEVERITY[e.type],
    severityText: e.type,
    body: e.message,
    attributes,
  };
}
