/**
 * One shard of a run: every shard simulates the whole cluster (the simulation is deterministic
 * and cheap next to emission) and emits only its part, so N processes — or N machines — share a
 * cluster too large for one. The rule, stable for a blueprint and N:
 * - a per-node target (dcgm-exporter on each node) belongs to shard ordinal mod N, the node's
 *   ordinal counting across the node pools in declaration order;
 * - a cluster-wide target (kube-state-metrics, Run:ai's metrics exporter, the scheduler, the
 *   queue controller) and the log sources (the k8s_events receiver watches the whole cluster,
 *   the scheduler is one pod) belong to shard 0.
 * The union of the N shards' output is the unsharded run's, target for target.
 */
import type { ClusterView, DeepReadonly, Pool } from "@gpusynth/sim";
import { nodeOrdinal } from "./addresses.js";

export interface Shard {
  /** 0 … count − 1. */
  readonly index: number;
  readonly count: number;
}

export const WHOLE_RUN: Shard = { index: 0, count: 1 };

/** Decides what a shard emits; built once, as node ordinals never change. */
export class ShardFilter {
  private readonly ordinals: ReadonlyMap<string, number>;

  constructor(
    readonly shard: Shard,
    pools: readonly DeepReadonly<Pool>[],
  ) {
    this.ordinals = new Map(pools.flatMap((pool) => pool.nodes.map((node) => [node.name, nodeOrdinal(pools, node)] as const)));
  }

  static of(shard: Shard, view: ClusterView): ShardFilter {
    return new ShardFilter(shard, view.pools);
  }

  /** Whether the node's per-node targets are this shard's. */
  ownsNode(node: string): boolean {
    return this.shard.count === 1 || (this.ordinals.get(node) ?? 0) % this.shard.count === this.shard.index;
  }

  /** The cluster-wide targets are shard 0's. */
  get ownsClusterWide(): boolean {
    return this.shard.index === 0;
  }

  /** The log sources are cluster-wide: shard 0's. */
  get ownsLogs(): boolean {
    return this.shard.index === 0;
  }
}

/**
 * The most GPUs one shard emits the per-node targets of — a process, or one worker thread of
 * `gpusynth run --workers`. Measured on Node 20 (bench/results/emit-speed.md): shard 0 of 8 of
 * blueprints/hyperscale.yaml (102,400 GPUs) collects 1.4 M points per scrape — the cluster-wide
 * targets, 1.1 M of them, and 12,800 GPUs' exporters — in about 1.5 s and a heap under 1 GB
 * beside the 350 MB the whole cluster's simulation holds; 16,384 GPUs more per shard would
 * leave no room in a 2 GB heap. Past it, more shards.
 */
export const MAX_SHARD_GPUS = 16_384;

/** The GPUs on a shard's nodes (ordinals ≡ index mod count, counted across the pools in order). */
export function shardGpus(pools: readonly { readonly nodes: number; readonly gpusPerNode: number }[], shard: Shard): number {
  let gpus = 0;
  let first = 0;
  for (const pool of pools) {
    // Ordinals first … first + nodes − 1; those ≡ index (mod count).
    const offset = (((shard.index - first) % shard.count) + shard.count) % shard.count;
    const owned = offset >= pool.nodes ? 0 : Math.floor((pool.nodes - 1 - offset) / shard.count) + 1;
    gpus += owned * pool.gpusPerNode;
    first += pool.nodes;
  }
  return gpus;
}
