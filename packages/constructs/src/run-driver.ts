/**
 * The loop of a run, written once: at each instant of a schedule, advance the simulation, take
 * the frame, hand it to every consumer. A schedule is the run's clock — which simulated instants
 * are shown — and a consumer is whatever reads the cluster: an emission pipeline, a summary, an
 * inventory, a calibration, a report's timeline. Offline and analysis runs go as fast as the CPU
 * allows (drive, or driveAsync when a consumer waits on I/O); a live run paces the same steps to
 * the wall clock (emit/src/live.ts).
 */
import { type SimulatedMs, simulatedMs } from "@gpusynth/sim";
import type { ClusterRun, Frame } from "./cluster-run.js";

export interface EveryOptions {
  /** Where the schedule starts (simulated ms; default 0): the grid is anchored here. */
  readonly fromMs?: number;
  /** The last instant (simulated ms). */
  readonly toMs: number;
  /** A frame at fromMs itself; by default the first is one interval in, as a scraper's first scrape comes after its interval. */
  readonly atStart?: boolean;
  /** A last frame at toMs when it is off the grid (a run's end); by default the last is the grid's. */
  readonly atEnd?: boolean;
}

/** A frame every `intervalMs` of simulated time, from `fromMs` to `toMs`. */
export function* every(intervalMs: number, options: EveryOptions): Generator<SimulatedMs> {
  const from = options.fromMs ?? 0;
  let last = Number.NaN;
  for (let t = options.atStart === true ? from : from + intervalMs; t <= options.toMs; t += intervalMs) {
    last = t;
    yield simulatedMs(t);
  }
  if (options.atEnd === true && last !== options.toMs && options.toMs > from) yield simulatedMs(options.toMs);
}

/** Takes the run's frame at `t`: advances it there first. */
function frameAt(run: ClusterRun, t: SimulatedMs): Frame {
  run.advanceTo(t);
  return run.frame();
}

/** Drives `run` through `schedule` as fast as the CPU allows, handing each frame to every consumer in order. */
export function drive(run: ClusterRun, schedule: Iterable<SimulatedMs>, ...consumers: ReadonlyArray<(frame: Frame) => void>): void {
  for (const t of schedule) {
    const frame = frameAt(run, t);
    for (const consume of consumers) consume(frame);
  }
}

/** A consumer that may wait (an exporter), and may start work for an instant before the run advances to it. */
export interface AsyncConsumer {
  /** Called before the run advances to `t`: work that goes on meanwhile (worker threads simulating their shards). */
  readonly before?: (t: SimulatedMs) => void;
  readonly consume: (frame: Frame) => void | Promise<void>;
}

/** Drives `run` through `schedule`, waiting for each consumer in order before the next instant. */
export async function driveAsync(run: ClusterRun, schedule: Iterable<SimulatedMs>, consumers: readonly AsyncConsumer[]): Promise<void> {
  for (const t of schedule) {
    for (const consumer of consumers) consumer.before?.(t);
    const frame = frameAt(run, t);
    for (const consumer of consumers) await consumer.consume(frame);
  }
}
