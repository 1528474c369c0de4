/**
 * Network identities the emulated cluster needs but the simulation does not model: node
 * internal IPs, per-node pod CIDRs and pod IPs. Deterministic functions of names, so every
 * construct agrees on them. Layout (a modelling choice): nodes in 10.0.0.0/16; pods in
 * 10.244.0.0/14 with a /24 per node (Flannel's default network is 10.244.0.0/16, one /24 per
 * node); control-plane pods (kube-state-metrics, the scheduler, Run:ai services) in the last
 * /24 of that range.
 */
import type { DeepReadonly, Node, Pool } from "@gpusynth/sim";
import { unitHash } from "./noise.js";

/** Index of a node across all pools, in declaration order. */
export function nodeOrdinal(pools: readonly DeepReadonly<Pool>[], node: DeepReadonly<Node>): number {
  let ordinal = 0;
  for (const pool of pools) {
    if (pool.name === node.pool.name) return ordinal + node.index;
    ordinal += pool.nodes.length;
  }
  return ordinal + node.index;
}

export function nodeInternalIp(ordinal: number): string {
  return `10.0.${Math.floor(ordinal / 250)}.${(ordinal % 250) + 4}`;
}

export function podCidr(ordinal: number): string {
  return `10.${244 + Math.floor(ordinal / 256)}.${ordinal % 256}.0/24`;
}

/** The IP of a pod with the given UID on the node with the given ordinal. */
export function podIp(ordinal: number, podUid: string): string {
  return `10.${244 + Math.floor(ordinal / 256)}.${ordinal % 256}.${2 + Math.floor(unitHash(podUid) * 252)}`;
}

/** The IP of a control-plane pod, by a stable key such as "kube-state-metrics". */
export function systemPodIp(key: string): string {
  return `10.247.255.${2 + Math.floor(unitHash(key) * 252)}`;
}
