/**
 * K shards of one process's part of a run, each in a worker thread, behind the run's one scrape
 * server and one sink: the way a run uses every core. Worker j of a process running shard I of N
 * emits shard I + j·N of N·K, so together the K workers emit exactly shard I of N (the node
 * ordinals ≡ I mod N) and the process-wide rule of shard.ts holds unchanged. Each worker
 * simulates the whole cluster and encodes its targets' scrapes in the sink's wire format; the
 * run's thread hands them to the sink, worker by worker, so a file is written in a fixed order
 * and an OTLP pipeline keeps one queue, one connection and one delivery report.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import type { Shard } from "@gpusynth/constructs";
import type { SimulatedMs, UnixMs } from "@gpusynth/sim";
import type { RunSelection } from "../run-selection.js";
import type { ServedTarget } from "../scrape-server.js";
import type { EncodedMetricsSink, MetricsSink } from "../sinks.js";
import type { EncodedScrape } from "../wire.js";
import type { ShardCalls, ShardEvent, WorkerClock } from "./protocol.js";
import { releaseShared } from "./shared-slabs.js";
import { WorkerThread, workerScript } from "./thread.js";

/** How long stopping waits for the workers to shut down before terminating them. */
const STOP_WAIT_MS = 1_000;

/** The shards K workers of a process running `shard` emit: together, exactly `shard`. */
export function workerShards(shard: Shard, workers: number): Shard[] {
  return Array.from({ length: workers }, (_, j) => ({ index: shard.index + j * shard.count, count: shard.count * workers }));
}

export interface ShardWorkersOptions extends Pick<RunSelection, "seed" | "shard"> {
  readonly workers: number;
  readonly clock: WorkerClock;
  /** Where the scrapes go; none: the workers only collect (for a scrape server). */
  readonly sink?: EncodedMetricsSink;
}

/** What one tick produced across the workers. */
export interface WorkersTick {
  /** Every collected target, served by the worker that holds its samples. */
  readonly targets: readonly ServedTarget[];
  readonly points: number;
  readonly failedTargets: number;
}

/** One shard's worker and the scrapes of its current tick, handed to the sink once every worker has ticked. */
interface ShardThread {
  readonly thread: WorkerThread<ShardCalls, ShardEvent>;
  scrapes: EncodedScrape[];
}

export class ShardWorkers {
  private readonly workers: ShardThread[];
  /** Settles as soon as any worker fails; every wait races it. */
  private readonly failed: Promise<never>;

  constructor(
    blueprint: Blueprint,
    private readonly options: ShardWorkersOptions,
  ) {
    let reject: (error: Error) => void = () => {};
    this.failed = new Promise<never>((_, r) => {
      reject = r;
    });
    // A failure nobody waits on yet must not be an unhandled rejection: the next wait reports it.
    this.failed.catch(() => {});
    const shards = workerShards(options.shard ?? { index: 0, count: 1 }, options.workers);
    this.workers = shards.map((shard) => {
      const worker: ShardThread = {
        scrapes: [],
        thread: new WorkerThread<ShardCalls, ShardEvent>(workerScript(import.meta.url, "./shard-worker.js"), {
          name: `shard ${shard.index}/${shard.count}`,
          data: {
            blueprint,
            shard,
            clock: options.clock,
            ...(options.seed === undefined ? {} : { seed: options.seed }),
            ...(options.sink === undefined ? {} : { wireFormat: options.sink.wireFormat }),
          },
          onEvent: (scrape) => worker.scrapes.push(scrape),
          onFailure: reject,
        }),
      };
      return worker;
    });
  }

  private all<T>(each: (worker: WorkerThread<ShardCalls, ShardEvent>) => Promise<T>): Promise<T[]> {
    return Promise.race([Promise.all(this.workers.map((w) => each(w.thread))), this.failed]);
  }

  /** Simulates up to `simulatedMs` in every worker, emitting nothing (a live run's warm-up). */
  async advanceTo(simulatedMs: SimulatedMs): Promise<void> {
    await this.all((w) => w.call("advance", simulatedMs));
  }

  /** A live run serves from `unixMs`: every worker's clock stamps the serving instant with it. */
  serve(unixMs: UnixMs): void {
    // A failure is reported to the next wait (onFailure).
    for (const { thread } of this.workers) thread.call("serve", unixMs).catch(() => {});
  }

  /**
   * Every worker advances to `simulatedMs` and collects its shard, scrapes stamped `timeMs`; the
   * scrapes go to the sink worker by worker, in the order each worker collected them, each once
   * the sink has stored the one before (an OTLP delivery may wait for room, as for a scrape
   * encoded on this thread), and the sink is told when the tick's scrape is over (forceFlush).
   */
  async tick(simulatedMs: SimulatedMs, timeMs: UnixMs): Promise<WorkersTick> {
    const replies = await this.all((w) => w.call("tick", { simulatedMs, timeMs }));
    const sink = this.options.sink;
    let points = 0;
    let failedTargets = 0;
    const targets: ServedTarget[] = [];
    for (const [i, worker] of this.workers.entries()) {
      const scrapes = worker.scrapes;
      worker.scrapes = [];
      for (const scrape of scrapes) {
        points += scrape.points;
        await sink?.accept(scrape);
        // Taken (a delivery retains the bodies it queues): the worker may carve the rest again.
        if (scrape.kind === "otlp") releaseShared(scrape.encoded.requests.map((r) => r.body));
      }
      const reply = replies[i];
      if (reply === undefined) continue;
      failedTargets += reply.failedTargets;
      for (const { key, target } of reply.targets) targets.push({ key, target, exposition: () => worker.thread.call("render", key) });
    }
    await sink?.forceFlush?.();
    return { targets, points, failedTargets };
  }

  /** Stops every worker (each shuts its pipeline down) and waits for them to exit; the sink is the caller's. */
  async close(): Promise<void> {
    // A worker that fails or hangs is not waited for: stopping is bounded.
    await Promise.all(this.workers.map(({ thread }) => thread.close(STOP_WAIT_MS)));
  }
}

/**
 * The workers a run asks for, or undefined when it runs on its own thread (no `workers`, or 1).
 * Their scrapes go to the run's sink, which must take encoded scrapes.
 */
export function shardWorkers(
  blueprint: Blueprint,
  run: RunSelection & { readonly sink?: MetricsSink },
  clock: WorkerClock,
): ShardWorkers | undefined {
  if (run.workers === undefined || run.workers <= 1) return undefined;
  const sink = run.sink;
  if (sink !== undefined && !isEncodedSink(sink))
    throw new Error("worker threads need a sink that takes encoded scrapes (EncodedMetricsSink)");
  return new ShardWorkers(blueprint, {
    workers: run.workers,
    clock,
    ...(run.shard === undefined ? {} : { shard: run.shard }),
    ...(run.seed === undefined ? {} : { seed: run.seed }),
    ...(sink === undefined ? {} : { sink }),
  });
}

function isEncodedSink(sink: MetricsSink): sink is EncodedMetricsSink {
  return "wireFormat" in sink && "accept" in sink;
}
