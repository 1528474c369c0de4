/**
 * Derived facts of the declared world that both validation and the simulation need, kept in
 * one place so they can never disagree: node names, and how a workload splits into pods.
 */
import type { NodePool, WorkloadType } from "./schema.js";

/** The CPUs a node's kubelet reports: every hardware thread of its cores. */
export function nodeCpus(pool: NodePool): number {
  return pool.cpuCores * pool.threadsPerCore;
}

/**
 * The memory a node's kernel reports (MemTotal), which the kubelet reports as its capacity: the
 * installed memory less the kernel's memory map, one 64-byte struct page for every 4 KiB page
 * (1/64 of it), which the boot allocator keeps and never hands to the page allocator. A "2 TiB"
 * node shows 2,016 GiB. The kernel image, firmware regions and a crash kernel take a little more
 * on a real node (cantfind.md `node.memtotal`).
 */
export function nodeMemoryBytes(pool: NodePool): number {
  const installed = pool.memoryGiB * 2 ** 30;
  return Math.floor((installed - installed / 64) / 4096) * 4096;
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
