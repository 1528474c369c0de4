/**
 * The wall clock a live run is paced by: the system's, or a test's. A live run reads the time
 * and waits only through it, so a test can drive the whole live loop — pacing, --duration, a
 * simulation falling behind — on a clock it moves itself, without waiting for real seconds.
 */

export interface WallClock {
  /** Unix ms now. */
  now(): number;
  /** Resolves after `ms` (at once when `ms` ≤ 0), or as soon as `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const SYSTEM_CLOCK: WallClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted || ms <= 0) return resolve();
      const wake = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      signal.addEventListener("abort", wake, { once: true });
    }),
};

/**
 * A test's clock: it stands still until the run sleeps, then jumps by exactly the time asked
 * for; `elapse` moves it as work would (a slow frame, a simulation falling behind).
 */
export class ManualClock implements WallClock {
  constructor(private nowMs: number) {}

  now(): number {
    return this.nowMs;
  }

  elapse(ms: number): void {
    this.nowMs += ms;
  }

  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.nowMs += Math.max(0, ms);
    // Let other work (servers, exporters) take its turn, as a real wait would.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
