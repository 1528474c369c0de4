/**
 * A worker thread emitting one shard of a run (shard-workers.ts starts it): it simulates the
 * whole cluster, as every shard does, collects its shard's targets at each tick and encodes
 * their scrapes in the sink's wire format for the run's thread, which owns the sink. It keeps the
 * last tick's samples to render a target's exposition when a scraper asks.
 */
import { workerData } from "node:worker_threads";
import { BLUEPRINT_CALENDAR, ClusterRun, LiveClock, type SeriesColumns, seriesOf } from "@gpusynth/constructs";
import { expositionChunks } from "../exposition.js";
import { MetricsPipeline } from "../metrics-pipeline.js";
import { advance } from "../pacing.js";
import { targetKey } from "../receiver.js";
import { encodeScrape } from "../wire.js";
import type { ShardCalls, ShardEvent, ShardWorkerData } from "./protocol.js";
import { SharedSlabs } from "./shared-slabs.js";
import { answerCalls, type PostEvent } from "./thread.js";

const data = workerData as ShardWorkerData;
const liveClock = data.clock.kind === "live" ? new LiveClock(data.clock.servingSimulatedUnixMs, data.clock.speed, Date.now()) : undefined;
const run = new ClusterRun(data.blueprint, {
  ...(data.seed === undefined ? {} : { seed: data.seed }),
  clock: liveClock?.stamp ?? BLUEPRINT_CALENDAR,
  shard: data.shard,
});
const format = data.wireFormat;
/** The tick being answered posts its scrapes here: to the run's thread, encoded as its sink stores them. */
let postScrape: PostEvent<ShardEvent> = () => {};
/** Where the request bodies are kept: memory the run's thread reads in place and hands back once stored. */
const slabs = new SharedSlabs();
const pipeline =
  format === undefined
    ? undefined
    : new MetricsPipeline(
        {
          export: async (metrics) => {
            const scrape = encodeScrape(format, metrics, slabs);
            postScrape(scrape, scrape.kind === "otlp" ? ownBuffers(scrape.encoded.requests.map((r) => r.body)) : undefined);
            return true;
          },
          shutdown: async () => {},
        },
        data.blueprint.telemetry.serviceMonitors,
      );
let latest = new Map<string, SeriesColumns>();

/**
 * The buffers that hold exactly one request body each (a body larger than a shared slab): they move
 * to the run's thread instead of being copied. A body in shared memory is shared, not moved.
 */
function ownBuffers(bodies: readonly Uint8Array[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const body of bodies)
    if (body.buffer instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) buffers.add(body.buffer);
  return [...buffers];
}

answerCalls<ShardCalls, ShardEvent>(
  {
    // A live run's warm-up, which nobody reads: what its GPUs ran is summed as it goes (skipPast).
    advance: (simulatedMs) => advance(run, simulatedMs, undefined, Number.POSITIVE_INFINITY, () => run.skipPast()),
    serve: (unixMs) => liveClock?.startServing(unixMs),
    tick: async ({ simulatedMs, timeMs }, post) => {
      await advance(run, simulatedMs);
      const frame = run.frame();
      latest = new Map(frame.targets.map((t) => [targetKey(t.target), seriesOf(t)]));
      postScrape = post;
      const report = await pipeline?.scrape(frame.targets, timeMs);
      return {
        targets: frame.targets.map((t) => ({ key: targetKey(t.target), target: t.target })),
        failedTargets: report?.failedTargets ?? 0,
      };
    },
    render: (key) => {
      const series = latest.get(key);
      return series === undefined ? undefined : expositionChunks(series);
    },
  },
  { immediate: ["render"], onClose: () => pipeline?.shutdown() },
);
