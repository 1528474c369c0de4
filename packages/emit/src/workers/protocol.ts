/**
 * The calls a shard worker answers (shard-worker.ts answers them, shard-workers.ts makes them,
 * over workers/thread.ts). Everything is plain data: it crosses threads by structured clone.
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

export type ShardCalls = {
  /** Simulate up to this time, emitting nothing (a live run's warm-up). */
  advance(simulatedMs: SimulatedMs): void;
  /** A live run serves from now on: its clock stamps the serving instant `unixMs`. */
  serve(unixMs: UnixMs): void;
  /**
   * Advance to `simulatedMs`, collect the shard's targets and encode each scrape stamped `timeMs`
   * (each posted as an event before the reply).
   */
  tick(at: { readonly simulatedMs: SimulatedMs; readonly timeMs: UnixMs }): Ticked;
  /** The text exposition of one of the last tick's targets, in chunks (expositionChunks; answered at once, between a tick's slices). */
  render(key: string): string[] | undefined;
};

/** What a tick collected: every target, and how many the sink refused. */
export interface Ticked {
  readonly targets: readonly TargetEntry[];
  readonly failedTargets: number;
}

/** A collected target: its key (receiver.ts targetKey) and address. */
export interface TargetEntry {
  readonly key: string;
  readonly target: ScrapeTarget;
}

/** What a tick posts before its reply: one target's scrape, encoded. */
export type ShardEvent = EncodedScrape;
