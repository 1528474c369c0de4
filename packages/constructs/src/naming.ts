/**
 * Kubernetes object names gpusynth derives for a workload's pods, shared by every construct so
 * that DCGM, kube-state-metrics and Run:ai series name the same containers and owners.
 * These are value shapes, not vendor names; signals/kube-state-metrics.md records their basis and
 * cantfind.md what is unconfirmed.
 */
import type { WorkloadType } from "@gpusynth/blueprint";
import { stableChars } from "./noise.js";

/**
 * The workload's main container: a Kubeflow PyTorchJob requires its container to be named
 * "pytorch" (training-operator docs); Run:ai names a job's container after the job.
 */
export function containerName(type: WorkloadType, workloadName: string): string {
  return type === "distributed-training" ? "pytorch" : workloadName;
}

/** The pod's controller (its ownerReference with controller=true): kind and name. */
export function podController(type: WorkloadType, workloadName: string): { kind: string; name: string } {
  return { kind: type === "distributed-training" ? "PyTorchJob" : "RunaiJob", name: workloadName };
}

/**
 * Queue names: KAI's default pod grouper derives a queue as <project>-<nodepool> when a pod
 * carries the node-pool label (plugins/defaultgrouper/default_grouper.go); gpusynth names every
 * project and department queue that way (cantfind.md: Run:ai's own naming is unconfirmed).
 */
export function queueName(queue: { name: string; pool: string }): string {
  return `${queue.name}-${queue.pool}`;
}

/** Kubernetes' name-suffix alphabet (apimachinery util/rand SafeEncodeString: no vowels, no 0/1/3). */
const K8S_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

/**
 * A suffix as the API server draws for a `generateName` (a DaemonSet's or ReplicaSet's pods: 5
 * characters; a Deployment's ReplicaSet: its pod-template hash, 10), fixed by `key` so that
 * every run names the same object alike.
 */
export function generatedSuffix(key: string, length = 5): string {
  return stableChars(K8S_SUFFIX_ALPHABET, length, key);
}
