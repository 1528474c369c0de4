/**
 * K shards of one process's part of a run, each in a worker thread, behind the run's one scrape
 * server and one sink: the way a run uses every core. Worker j of a process running shard I of N
 * emits shard I + j·N of N·K, so together the K workers emit exactly shard I of N (the node
 * ordinals ≡ I mod N) and the process-wide rule of shard.ts holds unchanged. Each worker
 * simulates the whole cluster and encodes its targets' scrapes in the sink's wire format; the
 * run's thread hands them to the sink, worker by worker, so a file is written in a fixed order
 * and an OTLP pipeline keeps one queue, one connection and one delivery report.
 */
import { Worker } from "node:worker_threads";
import type { Blueprint } from "@gpusynth/blueprint";
import type { Shard } from "@gpusynth/constructs";
import type { SimulatedMs, UnixMs } from "@gpusynth/sim";
import type { ServedTarget } from "../scrape-server.js";
import type { EncodedMetricsSink, MetricsSink } from "../sinks.js";
import type { EncodedScrape } from "../wire.js";
import type { FromWorker, ShardWorkerData, ToWorker, WorkerClock } from "./protocol.js";

/**
 * The worker's script: the built one, also when this module runs from its TypeScript source (the
 * tests do; `npm test` builds first), as a worker thread cannot load TypeScript.
 */
function workerScript(): URL {
  const here = new URL(import.meta.url);
  return here.pathname.endsWith(".ts") ? new URL("../../dist/workers/shard-worker.js", here) : new URL("./shard-worker.js", here);
}

/** How long stopping waits for the workers to shut down before terminating them. */
const STOP_WAIT_MS = 1_000;

/** The shards K workers of a process running `shard` emit: together, exactly `shard`. */
export function workerShards(shard: Shard, workers: number): Shard[] {
  return Array.from({ length: workers }, (_, j) => ({ index: shard.index + j * shard.count, count: shard.count * workers }));
}

export interface ShardWorkersOptions {
  readonly workers: number;
  /** The process's shard (default: the whole run). */
  readonly shard?: Shard;
  readonly seed?: number;
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

interface Expected {
  readonly type: FromWorker["type"];
  readonly resolve: (message: FromWorker) => void;
}

/** One worker thread and the replies it owes. */
class ShardWorker {
  private readonly worker: Worker;
  private readonly expected: Expected[] = [];
  private readonly renders = new Map<number, (text: string | undefined) => void>();
  private nextRender = 0;
  private failure: Error | undefined;
  /** The current tick's scrapes, handed to the sink once every worker has ticked. */
  scrapes: EncodedScrape[] = [];

  constructor(data: ShardWorkerData, onFailure: (error: Error) => void) {
    this.worker = new Worker(workerScript(), { workerData: data });
    const fail = (error: Error) => {
      if (this.failure !== undefined) return;
      this.failure = error;
      onFailure(error);
    };
    this.worker.on("message", (message: FromWorker) => {
      switch (message.type) {
        case "scrape":
          this.scrapes.push(message.scrape);
          return;
        case "rendered":
          this.renders.get(message.id)?.(message.text);
          this.renders.delete(message.id);
          return;
        case "failed":
          fail(new Error(`shard ${data.shard.index}/${data.shard.count}: ${message.error}`));
          return;
        default:
          this.expected.shift()?.resolve(message);
      }
    });
    this.worker.on("error", (error) => fail(error));
    this.worker.on("exit", (code) => {
      if (code !== 0) fail(new Error(`shard ${data.shard.index}/${data.shard.count}: worker exited with code ${code}`));
    });
  }

  /** Sends a command and waits for its reply of type `type`. */
  request<T extends FromWorker["type"]>(message: ToWorker, type: T): Promise<Extract<FromWorker, { type: T }>> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve) => {
      this.expected.push({ type, resolve: resolve as (message: FromWorker) => void });
      this.worker.postMessage(message);
    });
  }

  tell(message: ToWorker): void {
    if (this.failure === undefined) this.worker.postMessage(message);
  }

  render(key: string): Promise<string | undefined> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const id = this.nextRender++;
    return new Promise((resolve) => {
      this.renders.set(id, resolve);
      this.worker.postMessage({ type: "render", id, key } satisfies ToWorker);
    });
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

export class ShardWorkers {
  private readonly workers: ShardWorker[];
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
    this.workers = shards.map(
      (shard) =>
        new ShardWorker(
          {
            blueprint,
            shard,
            clock: options.clock,
            ...(options.seed === undefined ? {} : { seed: options.seed }),
            ...(options.sink === undefined ? {} : { wireFormat: options.sink.wireFormat }),
          },
          reject,
        ),
    );
  }

  private all<T>(each: (worker: ShardWorker) => Promise<T>): Promise<T[]> {
    return Promise.race([Promise.all(this.workers.map(each)), this.failed]);
  }

  /** Simulates up to `simulatedMs` in every worker, emitting nothing (a live run's warm-up). */
  async advanceTo(simulatedMs: SimulatedMs): Promise<void> {
    await this.all((w) => w.request({ type: "advance", simulatedMs }, "advanced"));
  }

  /** A live run serves from `unixMs`: every worker's clock stamps the serving instant with it. */
  serve(unixMs: UnixMs): void {
    for (const worker of this.workers) worker.tell({ type: "serve", unixMs });
  }

  /**
   * Every worker advances to `simulatedMs` and collects its shard, scrapes stamped `timeMs`; the
   * scrapes go to the sink worker by worker, in the order each worker collected them.
   */
  async tick(simulatedMs: SimulatedMs, timeMs: UnixMs): Promise<WorkersTick> {
    const replies = await this.all((w) => w.request({ type: "tick", simulatedMs, timeMs }, "ticked"));
    let points = 0;
    let failedTargets = 0;
    const targets: ServedTarget[] = [];
    this.workers.forEach((worker, i) => {
      for (const scrape of worker.scrapes) {
        points += scrape.points;
        this.options.sink?.accept(scrape);
      }
      worker.scrapes = [];
      const reply = replies[i];
      if (reply === undefined) return;
      failedTargets += reply.failedTargets;
      for (const { key, target } of reply.targets) targets.push({ key, target, exposition: () => worker.render(key) });
    });
    return { targets, points, failedTargets };
  }

  /** Stops every worker (each shuts its pipeline down) and waits for them to exit; the sink is the caller's. */
  async close(): Promise<void> {
    const stopped = Promise.allSettled(this.workers.map((w) => w.request({ type: "stop" }, "stopped")));
    // A worker that fails or hangs is not waited for: stopping is bounded.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([stopped, new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/**
 * The workers a run asks for, or undefined when it runs on its own thread (no `workers`, or 1).
 * Their scrapes go to the run's sink, which must take encoded scrapes.
 */
export function shardWorkers(
  blueprint: Blueprint,
  run: { readonly workers?: number; readonly shard?: Shard; readonly seed?: number; readonly sink?: MetricsSink },
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
