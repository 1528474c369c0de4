/** A worker thread of the inventory pool (inventory-pool.ts): runs one blueprint's window at a time. */
import { loadBlueprint } from "@gpusynth/blueprint";
import { answerCalls } from "@gpusynth/emit";
import { collectInventory } from "./inventory.js";
import type { InventoryCalls } from "./inventory-pool.js";

answerCalls<InventoryCalls>({
  inventory: (job) =>
    collectInventory(loadBlueprint(job.file).blueprint, job.durationMs, job.intervalMs, undefined, undefined, job.fromMs ?? 0),
});
