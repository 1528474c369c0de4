/**
 * Derived facts of the declared world that both validation and the simulation need, kept in
 * one place so they can never disagree: node names, and how a workload splits into pods.
 */
import type { NodePool, WorkloadType } from "./schema.js";

/** The CPUs a node's kubelet reports: every hardware thread of its cores. */
export function nodeCpus(pool: NodePool): number {
  return pool.cpuCores * pool.threadsPerCore;
}

export function nodeName(pool: NodePool, index: number): string {
  return `${pool.nodeNamePrefix ?? `${pool.name}-node-`}${index}`;
}

export interface PodShape {
  readonly pods: number;
  readonly gpusPerPod: number;
}

/**
 * How a workload of `gpus` GPUs runs on nodes with `gpusPerNode` GPUs, or undefined if it
 * never can. Single-pod types (training, interactive, inference) need all GPUs on one node.
 * A distributed-training gang uses as few pods as fit on a node each, equal in size (the
 * usual one-pod-per-node layout of PyTorchJob/MPIJob launchers), so its GPU count must split
 * evenly across them.
 */
export function podShape(type: WorkloadType, gpus: number, pool: NodePool): PodShape | undefined {
  if (type !== "distributed-training") {
    return gpus <= pool.gpusPerNode ? { pods: 1, gpusPerPod: gpus } : undefined;
  }
  const pods = Math.ceil(gpus / pool.gpusPerNode);
  if (gpus % pods !== 0 || pods > pool.nodes) return undefined;
  return { pods, gpusPerPod: gpus / pods };
}
