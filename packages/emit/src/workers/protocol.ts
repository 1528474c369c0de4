/**
 * What the run's thread and its shard workers say to each other (shard-workers.ts is the run's
 * side, shard-worker.ts a worker's). Everything is plain data: messages cross threads by
 * structured clone.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import type { ScrapeTarget, Shard } from "@gpusynth/constructs";
import type { SimulatedMs, UnixMs } from "@gpusynth/sim";
import type { EncodedScrape, WireFormat } from "../wire.js";

/** The clock a worker stamps time-valued samples with: the blueprint's calendar, or a live run's. */
export type WorkerClock =
  | { readonly kind: "calendar" }
  | { readonly kind: "live"; readonly servingSimulatedUnixMs: number; readonly speed: number };

export interface ShardWorkerData {
  readonly blueprint: Blueprint;
  readonly seed?: number;
  readonly shard: Shard;
  readonly clock: WorkerClock;
  /** The sink's wire format; absent when nothing is pushed or written (a scrape server only). */
  readonly wireFormat?: WireFormat;
}

export type ToWorker =
  /** Simulate up to this time, emitting nothing (a live run's warm-up). */
  | { readonly type: "advance"; readonly simulatedMs: SimulatedMs }
  /** A live run serves from now on: its clock stamps the serving instant `unixMs`. */
  | { readonly type: "serve"; readonly unixMs: UnixMs }
  /** Advance to `simulatedMs`, collect the shard's targets and encode each scrape stamped `timeMs`. */
  | { readonly type: "tick"; readonly simulatedMs: SimulatedMs; readonly timeMs: UnixMs }
  /** The text exposition of one of the last tick's targets. */
  | { readonly type: "render"; readonly id: number; readonly key: string }
  | { readonly type: "stop" };

export type FromWorker =
  | { readonly type: "advanced" }
  /** One target's scrape, encoded; all of a tick's come before its "ticked". */
  | { readonly type: "scrape"; readonly scrape: EncodedScrape }
  | { readonly type: "ticked"; readonly targets: readonly TargetEntry[]; readonly failedTargets: number }
  | { readonly type: "rendered"; readonly id: number; readonly text: string | undefined }
  | { readonly type: "stopped" }
  | { readonly type: "failed"; readonly error: string };

/** A collected target: its key (receiver.ts targetKey) and address. */
export interface TargetEntry {
  readonly key: string;
  readonly target: ScrapeTarget;
}
