/**
 * One shard of a run: every shard simulates the whole cluster (the simulation is deterministic
 * and cheap next to emission) and emits only its part, so N processes — or N machines — share a
 * cluster too large for one. The rule, stable for a blueprint and N:
 * - a per-node target (dcgm-exporter on each node) belongs to shard ordinal mod N, the node's
 *   ordinal counting across the node pools in declaration order;
 * - the cluster-wide exporters are spread over the shards, each instance whole on one, by the
 *   rank of its construct's placement, mod N: Run:ai's metrics exporter rank 0, kube-state-metrics
 *   rank 1 (sharded, its instances ranks 1 … s), the scheduler and the queue controller rank 2 —
 *   at 100,000 GPUs the first two are the largest targets of the run (bench/results/hyperscale.md);
 * - the log sources (the k8s_events receiver watches the whole cluster, the scheduler is one
 *   pod) belong to shard 0.
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

  /** Whether a cluster-wide exporter of rank `rank` (its construct's placement) is this shard's: rank mod N. */
  ownsClusterWide(rank: number): boolean {
    return rank % this.shard.count === this.shard.index;
  }

  /** The log sources are cluster-wide: shard 0's. */
  get ownsLogs(): boolean {
    return this.shard.index === 0;
  }
}

/**
 * The most GPUs one shard emits the per-node targets of — a process, or one worker thread of
 * `gpusynth run --workers`. Measured on Node 20 (bench/results/hyperscale.md): a shard of
 * blueprints/hyperscale.yaml with 12,800 GPUs' nodes (dcgm-exporter and the kubelet's cAdvisor
 * on each) encodes 707k points in 3.7 s of CPU per interval, and with Run:ai's exporter besides
 * (shard 0) 1.4 M points in 7.8 s, its heap under 600 MB; at 16,384 GPUs the busiest shard stays
 * near 70 % of a core at a 15 s interval, which leaves room for slower machines and scrapes.
 * Past it, more shards.
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
