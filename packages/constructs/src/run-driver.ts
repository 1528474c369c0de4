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
  /** The frame, and the instant the schedule asked for (a paced run's frame may fall short of it). */
  readonly consume: (frame: Frame, wanted: SimulatedMs) => void | Promise<void>;
}

export interface DriveOptions {
  /**
   * How the run gets to an instant (default: at once). A paced run simulates in slices between
   * which the event loop turns, and may stop short when its time for the frame is up.
   */
  readonly advance?: (run: ClusterRun, t: SimulatedMs) => void | Promise<void>;
  /** Ends the drive at the next step: a stopped run takes no further frame. */
  readonly signal?: AbortSignal;
}

/**
 * Drives `run` through `schedule` — instants as fast as the CPU allows, or as a paced clock
 * yields them — waiting for each consumer in order before the next instant.
 */
export async function driveAsync(
  run: ClusterRun,
  schedule: Iterable<SimulatedMs> | AsyncIterable<SimulatedMs>,
  consumers: readonly AsyncConsumer[],
  options: DriveOptions = {},
): Promise<void> {
  const stopped = () => options.signal?.aborted === true;
  for await (const t of schedule) {
    if (stopped()) return;
    for (const consumer of consumers) consumer.before?.(t);
    await (options.advance ?? ((r, to) => r.advanceTo(to)))(run, t);
    if (stopped()) return;
    if (!(await handOn(run.frame(), t, consumers, stopped))) return;
  }
}

/**
 * Hands one frame to every consumer in order; false when the run stopped meanwhile. A call of its
 * own, so that the frame is not held by the loop's state while it waits for the next instant: a
 * live run waits an interval, long enough for a frame's hundreds of thousands of samples to
 * outlive V8's young generation and be marked by every full collection until the next frame.
 */
async function handOn(frame: Frame, t: SimulatedMs, consumers: readonly AsyncConsumer[], stopped: () => boolean): Promise<boolean> {
  for (const consumer of consumers) {
    await consumer.consume(frame, t);
    if (stopped()) return false;
  }
  return true;
}
