/**
 * When each pod's container starts: the kubelet pulls the workload's image first if the node lacks
 * it (imagePullPolicy IfNotPresent, images/image_manager.go), then creates and starts the container
 * (kuberuntime_container.go startContainer). Until then the pod is bound but its container waits
 * in ContainerCreating and its GPUs do nothing. A node keeps a pulled image (across reboots too); a
 * pod that arrives while another pod's pull of the same image runs waits for it. A container
 * restarted in place finds its image present. The kubelet pulls one image at a time
 * (KubeletConfiguration serializeImagePulls, true by default), so a pull of another image waits
 * for the one under way. How long a pull takes varies by node around the image's declared
 * pullTime, 0.75× to 1.25× (a modelling choice: registry and network throughput differ by node).
 *
 * One model for every reader — kube-state-metrics' container states, the GPUs' activity, the
 * kubelet's Pulling/Pulled/Created/Started events — fed the simulation's events once, by its owner
 * (a ClusterRun, or a source that keeps its own), before any reader sees the event.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import type { DomainEvent, PodPlacement } from "@gpusynth/sim";
import { between } from "../noise.js";

/** A blueprint's images by name: their size and how long a pull takes. */
export type Images = ReadonlyMap<string, { readonly sizeBytes: number; readonly pullTime: number }>;

export function imagesOf(blueprint: Blueprint): Images {
  return new Map(blueprint.images.map((i) => [i.name, i]));
}

/** A container's start: whether the image had to be pulled, and when (simulated ms). */
export interface ContainerStart {
  /** The image was on the node already (or no image is declared): it starts at once. */
  readonly present: boolean;
  /** When the kubelet began (bind or restart), and when the container starts, after any pull. */
  readonly fromMs: number;
  readonly startsAtMs: number;
  /** How long the pull itself took, without the wait for the pull before it (0 when present). */
  readonly pullMs: number;
}

export class ImagePulls {
  /** When each node has (or will have) each image. */
  private readonly nodeImages = new Map<string, Map<string, number>>();
  /** Until when each node's kubelet is busy pulling (it pulls one image at a time). */
  private readonly pullingUntil = new Map<string, number>();
  private readonly starts = new Map<string, ContainerStart>();

  constructor(private readonly images: Images) {}

  readonly record = (event: DomainEvent): void => {
    switch (event.kind) {
      case "WorkloadStarted":
      case "ContainerRestarted":
        for (const pod of event.pods) this.start(event.workload.image, pod, event.t);
        return;
      case "WorkloadPreempted":
      case "WorkloadCompleted":
      case "WorkloadFailed":
      case "WorkloadCancelled":
        for (const pod of event.pods) this.starts.delete(pod.uid);
        return;
      case "RankFailed":
        this.starts.delete(event.pod.uid);
        return;
      default:
        return;
    }
  };

  /** The pod's latest container start, while the pod runs. */
  startOf(podUid: string): ContainerStart | undefined {
    return this.starts.get(podUid);
  }

  /** True while the pod's container waits for its image (ContainerCreating) at simulated `t`. */
  creating(podUid: string, t: number): boolean {
    const start = this.starts.get(podUid);
    return start !== undefined && t < start.startsAtMs;
  }

  private start(image: string | undefined, pod: PodPlacement, t: number): void {
    const spec = image === undefined ? undefined : this.images.get(image);
    const present = { present: true, fromMs: t, startsAtMs: t, pullMs: 0 };
    if (image === undefined || spec === undefined) {
      this.starts.set(pod.uid, present);
      return;
    }
    let onNode = this.nodeImages.get(pod.node);
    if (onNode === undefined) {
      onNode = new Map();
      this.nodeImages.set(pod.node, onNode);
    }
    const readyAt = onNode.get(image);
    if (readyAt !== undefined && readyAt <= t) {
      this.starts.set(pod.uid, present);
      return;
    }
    if (readyAt !== undefined) {
      // The same image is being pulled for another pod: this one waits for that pull.
      this.starts.set(pod.uid, { present: false, fromMs: t, startsAtMs: readyAt, pullMs: readyAt - t });
      return;
    }
    const pullMs = Math.round(spec.pullTime * between(`${pod.node}/${image}/pull`, 0.75, 1.25));
    const begins = Math.max(t, this.pullingUntil.get(pod.node) ?? t);
    const done = begins + pullMs;
    this.pullingUntil.set(pod.node, done);
    onNode.set(image, done);
    this.starts.set(pod.uid, { present: false, fromMs: t, startsAtMs: done, pullMs });
  }
}
