/**
 * Inventories of several blueprints at once, one worker thread per core: each blueprint's run
 * is independent and single-threaded, so check-signals and `just gen` finish in the time of the
 * longest run rather than the sum of all. Every blueprint is loaded here first, so a bad one
 * is the same BlueprintError as anywhere else before any worker starts.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { loadBlueprint } from "@gpusynth/blueprint";
import { collectInventory, type Inventory } from "./inventory.js";

export interface InventoryJob {
  readonly file: string;
  readonly durationMs: number;
  readonly intervalMs: number;
}

/** What a worker sends back: the inventory, or the message of what went wrong. */
export type InventoryReply = { readonly inventory: Inventory } | { readonly error: string };

/** The inventories of `files`, in their order; at most one worker per core. */
export async function collectInventories(
  files: readonly string[],
  durationMs: number,
  intervalMs: number,
  /** Called as blueprints finish: how many are done, and the names of those still running. */
  onProgress?: (done: number, running: readonly string[]) => void,
): Promise<Inventory[]> {
  const blueprints = files.map((file) => loadBlueprint(file).blueprint);
  const workers = Math.min(files.length, availableParallelism());
  // One blueprint, or one core: a worker would only add its start-up.
  if (workers <= 1) return blueprints.map((blueprint) => collectInventory(blueprint, durationMs, intervalMs));
  const results = new Array<Inventory>(files.length);
  const running = new Set<string>();
  let done = 0;
  // Largest clusters first, so the longest run starts at once; the queue is popped from its end.
  const gpus = blueprints.map((b) => b.nodePools.reduce((sum, p) => sum + p.nodes * p.gpusPerNode, 0));
  const queue = files.map((file, index) => ({ file, index })).sort((a, b) => (gpus[a.index] as number) - (gpus[b.index] as number));
  const runOne = async (): Promise<void> => {
    for (let job = queue.pop(); job !== undefined; job = queue.pop()) {
      const name = (blueprints[job.index] as (typeof blueprints)[number]).cluster.name;
      running.add(name);
      onProgress?.(done, [...running]);
      results[job.index] = await inWorker({ file: job.file, durationMs, intervalMs });
      running.delete(name);
      onProgress?.(++done, [...running]);
    }
  };
  await Promise.all(Array.from({ length: workers }, runOne));
  return results;
}

function inWorker(job: InventoryJob): Promise<Inventory> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./inventory-worker.js", import.meta.url), { workerData: job });
    worker.once("message", (reply: InventoryReply) => {
      if ("inventory" in reply) resolve(reply.inventory);
      else reject(new Error(`inventory of ${job.file}: ${reply.error}`));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`the inventory worker for ${job.file} exited with code ${code}`));
    });
  });
}
