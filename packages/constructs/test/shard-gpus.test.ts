/**
 * The shard rule's arithmetic: how many GPUs a shard emits, counted from the blueprint's pools
 * without a simulation (for the per-shard ceiling), agrees with the nodes a shard's filter owns in
 * a built cluster; and every node is owned by exactly one shard.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ShardFilter, shardGpus } from "@gpusynth/constructs";
import { Simulation } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";

const enterprise = loadBlueprint(fileURLToPath(new URL("../../../blueprints/enterprise.yaml", import.meta.url))).blueprint;

describe("shards", () => {
  const view = new Simulation(enterprise).view();
  it.each([1, 2, 3, 5, 7, 64])("counts each of %i shards' GPUs as its filter owns them, and owns every node once", (count) => {
    const owners = new Map<string, number>();
    for (let index = 0; index < count; index++) {
      const filter = ShardFilter.of({ index, count }, view);
      let gpus = 0;
      for (const pool of view.pools)
        for (const node of pool.nodes)
          if (filter.ownsNode(node.name)) {
            gpus += node.gpus.length;
            owners.set(node.name, (owners.get(node.name) ?? 0) + 1);
          }
      expect(shardGpus(enterprise.nodePools, { index, count })).toBe(gpus);
    }
    expect([...owners.values()].every((n) => n === 1)).toBe(true);
    expect(owners.size).toBe(view.pools.reduce((n, p) => n + p.nodes.length, 0));
  });
});
