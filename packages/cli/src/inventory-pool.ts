/**
 * Inventories of several blueprints at once, one worker thread per core: each blueprint's run
 * is independent and single-threaded, so check-signals and `just gen` finish in the time of the
 * longest run rather than the sum of all. Callers load every blueprint first (blueprintFiles), so
 * a bad one is the same BlueprintError as anywhere else before any worker starts, and a caller that
 * chooses among blueprints by their content parses each once.
 */
import { availableParallelism, totalmem } from "node:os";
import { type Blueprint, loadBlueprint } from "@gpusynth/blueprint";
import { shardGpus, WHOLE_RUN } from "@gpusynth/constructs";
import { WorkerThread, workerScript } from "@gpusynth/emit";
import { collectInventory, type Inventory, mergeInventories } from "./inventory.js";

export interface InventoryJob {
  readonly file: string;
  readonly durationMs: number;
  readonly intervalMs: number;
  /** Collect only after this simulated time (a window of the run; see collectInventory). */
  readonly fromMs?: number;
}

/**
 * A blueprint this large is run as two windows of its duration, one per worker, where there are
 * workers enough: its run alone would otherwise outlast all the others together.
 */
const SPLIT_FROM_GPUS = 1024;
/**
 * The workers from which such a run is split. The second window simulates the first half again,
 * unobserved, before its own: platform.yaml's day took 20.7 s of CPU whole and 26 s as two
 * windows. On two cores the other shipped blueprints keep the second worker busy about as long as
 * platform's whole day, so the windows cost a sixth more CPU for no shorter a check.
 */
const SPLIT_FROM_WORKERS = 3;

/** The one call an inventory worker answers (inventory-worker.ts), over the product's worker mechanism. */
export type InventoryCalls = {
  inventory(job: InventoryJob): Inventory;
};

/** A blueprint file and what it declares. */
export interface BlueprintFile {
  readonly file: string;
  readonly blueprint: Blueprint;
}

/** Loads each file (a BlueprintError names the first bad one). */
export function blueprintFiles(files: readonly string[]): BlueprintFile[] {
  return files.map((file) => ({ file, blueprint: loadBlueprint(file).blueprint }));
}

/** The inventories of `files`, in their order; at most one worker per core. */
export async function collectInventories(
  files: readonly BlueprintFile[],
  /** Simulated time per blueprint: one for all, or per file. */
  duration: number | ((file: string, blueprint: Blueprint) => number),
  /** Simulated time between collections: one for all, or per file. */
  interval: number | ((file: string, blueprint: Blueprint) => number),
  /** Called as blueprints finish: how many are done, and the names of those still running. */
  onProgress?: (done: number, running: readonly string[]) => void,
): Promise<Inventory[]> {
  // One record per blueprint: what it runs, the inventories of its windows, the windows left.
  const runs = files.map(({ file, blueprint }) => ({
    file,
    name: blueprint.cluster.name,
    blueprint,
    durationMs: typeof duration === "number" ? duration : duration(file, blueprint),
    intervalMs: typeof interval === "number" ? interval : interval(file, blueprint),
    gpus: shardGpus(blueprint.nodePools, WHOLE_RUN),
    parts: [] as Inventory[],
    windowsLeft: 0,
  }));
  const workers = Math.min(files.length, availableParallelism());
  // One blueprint, or one core: a worker would only add its start-up.
  if (workers <= 1) return runs.map((run) => collectInventory(run.blueprint, run.durationMs, run.intervalMs));
  const running = new Set<string>();
  let done = 0;
  // Largest clusters first, so the longest runs start at once; the queue is popped from its end.
  const queue = runs
    .flatMap((run) => {
      const half = Math.floor(run.durationMs / 2 / run.intervalMs) * run.intervalMs;
      // Most of a run's cost is its collections: GPUs × samples.
      const weight = (run.gpus * run.durationMs) / run.intervalMs;
      const windows =
        workers >= SPLIT_FROM_WORKERS && run.gpus >= SPLIT_FROM_GPUS && half > 0
          ? [
              { run, durationMs: half, fromMs: 0, weight: weight / 2 },
              { run, durationMs: run.durationMs, fromMs: half, weight: weight / 2 },
            ]
          : [{ run, durationMs: run.durationMs, fromMs: 0, weight }];
      run.windowsLeft = windows.length;
      return windows;
    })
    .sort((a, b) => a.weight - b.weight);
  // A hyperscale inventory holds millions of series keys (its kube-state-metrics lists 115,000
  // system pods): half the machine's memory, not the default heap of a worker.
  const maxOldGenerationSizeMb = Math.floor(totalmem() / 2 ** 21);
  const runOne = async (worker: number): Promise<void> => {
    const thread = new WorkerThread<InventoryCalls>(workerScript(import.meta.url, "./inventory-worker.js"), {
      name: `inventory worker ${worker}`,
      data: undefined,
      resourceLimits: { maxOldGenerationSizeMb },
    });
    try {
      for (let job = queue.pop(); job !== undefined; job = queue.pop()) {
        const { run } = job;
        running.add(run.name);
        onProgress?.(done, [...running]);
        const window = { file: run.file, durationMs: job.durationMs, intervalMs: run.intervalMs, fromMs: job.fromMs };
        try {
          run.parts.push(await thread.call("inventory", window));
        } catch (error) {
          throw new Error(`inventory of ${run.file}: ${error instanceof Error ? error.message : String(error)}`);
        }
        if (--run.windowsLeft === 0) {
          running.delete(run.name);
          onProgress?.(++done, [...running]);
        }
      }
    } finally {
      await thread.close(0);
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, i) => runOne(i)));
  return runs.map((run) => {
    const [first, ...rest] = run.parts.sort((x, y) => x.durationMs - y.durationMs);
    if (first === undefined) throw new Error(`no inventory of ${run.file}`);
    return rest.reduce(mergeInventories, first);
  });
}
