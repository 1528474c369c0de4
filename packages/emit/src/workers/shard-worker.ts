/**
 * A worker thread emitting one shard of a run (shard-workers.ts starts it): it simulates the
 * whole cluster, as every shard does, collects its shard's targets at each tick and encodes
 * their scrapes in the sink's wire format for the run's thread, which owns the sink. It keeps the
 * last tick's samples to render a target's exposition when a scraper asks.
 */
import { parentPort, workerData } from "node:worker_threads";
import { BLUEPRINT_CALENDAR, ClusterRun, LiveClock, type Sample } from "@gpusynth/constructs";
import { exposition } from "../exposition.js";
import { MetricsPipeline } from "../metrics-pipeline.js";
import { advance } from "../pacing.js";
import { targetKey } from "../receiver.js";
import type { MetricsSink } from "../sinks.js";
import { encodeScrape } from "../wire.js";
import type { FromWorker, ShardWorkerData, ToWorker } from "./protocol.js";

const data = workerData as ShardWorkerData;
if (parentPort === null) throw new Error("shard-worker.js runs as a worker thread (see shard-workers.ts)");
const port = parentPort;
const post = (message: FromWorker) => port.postMessage(message);

const liveClock = data.clock.kind === "live" ? new LiveClock(data.clock.servingSimulatedUnixMs, data.clock.speed, Date.now()) : undefined;
const run = new ClusterRun(data.blueprint, {
  ...(data.seed === undefined ? {} : { seed: data.seed }),
  clock: liveClock?.stamp ?? BLUEPRINT_CALENDAR,
  shard: data.shard,
});
const format = data.wireFormat;
/** Hands each scrape to the run's thread, encoded as its sink stores it. */
const sink: MetricsSink | undefined =
  format === undefined
    ? undefined
    : {
        export: async (metrics) => {
          post({ type: "scrape", scrape: encodeScrape(format, metrics) });
          return true;
        },
        shutdown: async () => {},
      };
const pipeline = sink === undefined ? undefined : new MetricsPipeline(sink);
let latest = new Map<string, readonly Sample[]>();

async function handle(message: ToWorker): Promise<void> {
  switch (message.type) {
    case "advance":
      await advance(run, message.simulatedMs);
      post({ type: "advanced" });
      return;
    case "serve":
      liveClock?.startServing(message.unixMs);
      return;
    case "tick": {
      await advance(run, message.simulatedMs);
      const frame = run.frame();
      latest = new Map(frame.targets.map((t) => [targetKey(t.target), t.samples]));
      const report = await pipeline?.scrape(frame.targets, message.timeMs);
      post({
        type: "ticked",
        targets: frame.targets.map((t) => ({ key: targetKey(t.target), target: t.target })),
        failedTargets: report?.failedTargets ?? 0,
      });
      return;
    }
    case "render": {
      const samples = latest.get(message.key);
      post({ type: "rendered", id: message.id, text: samples === undefined ? undefined : exposition(samples) });
      return;
    }
    case "stop":
      await pipeline?.shutdown();
      post({ type: "stopped" });
      port.close();
      return;
    default: {
      const unknown: never = message;
      throw new Error(`shard worker: unknown message ${JSON.stringify(unknown)}`);
    }
  }
}

// Commands run one after another (a tick must not start before the previous one ended); a render
// is answered at once, between the slices of a tick's simulation.
let queue = Promise.resolve();
port.on("message", (message: ToWorker) => {
  const fail = (error: unknown) => post({ type: "failed", error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  if (message.type === "render") {
    handle(message).catch(fail);
    return;
  }
  queue = queue.then(() => handle(message)).catch(fail);
});
