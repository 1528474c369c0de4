/**
 * The one time axis a run stamps everything on. A scraper stamps samples with its own wall
 * clock, so in a live run every time gpusynth emits — sample times, the values of time-valued
 * families (kube_pod_start_time, runai_last_gpu_utilization_time_*), log records, the API's
 * answers — is the consumers' wall-clock moment its simulated instant maps to. Offline runs keep
 * the blueprint's own calendar (time.start onwards).
 */

import { type UnixMs, unixMs } from "@gpusynth/sim";

/** Maps a simulated Unix time (time.start + simulated ms) to the Unix ms stamped on what is emitted. */
export type StampClock = (simulatedUnixMs: number) => UnixMs;

/** Offline: the blueprint's calendar as it is. */
export const BLUEPRINT_CALENDAR: StampClock = (simulatedUnixMs) => unixMs(simulatedUnixMs);

/**
 * Live: the simulated instant at which the run starts serving is stamped with the wall-clock
 * moment it does (`startServing`), and simulated durations are compressed by `speed`. What was
 * simulated before (the warm-up) lies in the consumers' past; nothing is ever in their future.
 */
export class LiveClock {
  private servingUnixMs: number;

  constructor(
    /** time.start + the simulated ms at which serving starts. */
    private readonly servingSimulatedUnixMs: number,
    private readonly speed: number,
    nowUnixMs: number,
  ) {
    this.servingUnixMs = nowUnixMs;
  }

  /** Serving starts now (after the warm-up): the serving instant is stamped `unixMs`. */
  startServing(unixMs: number): void {
    this.servingUnixMs = unixMs;
  }

  readonly stamp: StampClock = (simulatedUnixMs) =>
    unixMs(this.servingUnixMs + (simulatedUnixMs - this.servingSimulatedUnixMs) / this.speed);
}
