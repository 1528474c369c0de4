/** One blueprint's inventory in a worker thread (see inventory-pool.ts). */
import { parentPort, workerData } from "node:worker_threads";
import { loadBlueprint } from "@gpusynth/blueprint";
import { collectInventory } from "./inventory.js";
import type { InventoryJob, InventoryReply } from "./inventory-pool.js";

const job = workerData as InventoryJob;
let reply: InventoryReply;
try {
  reply = {
    inventory: collectInventory(loadBlueprint(job.file).blueprint, job.durationMs, job.intervalMs, undefined, undefined, job.fromMs ?? 0),
  };
} catch (error) {
  reply = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}
parentPort?.postMessage(reply);
