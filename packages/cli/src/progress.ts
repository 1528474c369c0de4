/**
 * Progress of work that can take more than a couple of seconds (an offline run, calibrate,
 * report, dump, check-signals): on a terminal one line redrawn at most five times a second with
 * the rate and the time left; otherwise a plain line every 10 s, so a CI log shows the work is
 * alive and how far it got.
 */
import { formatDuration } from "@gpusynth/blueprint";
import type { Output } from "./output.js";

const REDRAW_MS = 200;
const PLAIN_LINE_MS = 10_000;

/** The backlog, for a progress line: what a long run's time goes to. */
export const backlogNote = (pending: number): string => `${pending.toLocaleString("en-US")} pending`;

/** How an amount of the work prints: simulated time, or a count of things. */
export type ProgressUnit = "simulated" | { readonly noun: string };

export class Progress {
  private readonly started = performance.now();
  private lastDrawn = Number.NEGATIVE_INFINITY;
  private lastLine = performance.now();
  private drawn = false;

  constructor(
    private readonly output: Output,
    /** What is being done, e.g. "calibrate lab". */
    private readonly what: string,
    private readonly total: number,
    private readonly unit: ProgressUnit = "simulated",
  ) {}

  /**
   * `done` of the total is done (and `current`, when given, is what runs now: a function is called
   * only when a line is drawn, so a caller that updates every step pays for its text a few times a
   * second, not every step).
   */
  update(done: number, current?: string | (() => string)): void {
    const now = performance.now();
    if (this.output.interactive) {
      if (now - this.lastDrawn < REDRAW_MS) return;
      this.lastDrawn = now;
      this.drawn = true;
      this.output.err(`\r${this.line(done, now, current)}\u001b[K`);
    } else if (now - this.lastLine >= PLAIN_LINE_MS) {
      this.lastLine = now;
      this.output.err(`${this.line(done, now, current)}\n`);
    }
  }

  /** Clears the terminal line (plain lines stay, as a log's do). */
  finish(): void {
    if (this.drawn) this.output.err("\r\u001b[K");
  }

  private line(done: number, now: number, current: string | (() => string) | undefined): string {
    const share = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const elapsedMs = now - this.started;
    const perSecond = elapsedMs > 0 ? done / (elapsedMs / 1000) : 0;
    const leftMs = perSecond > 0 ? ((this.total - done) / perSecond) * 1000 : Number.NaN;
    const parts = [
      `${this.what}: ${this.amountOfTotal(done)} (${Math.floor(share * 100)}%)`,
      this.unit === "simulated" ? `×${Math.round(perSecond / 1000).toLocaleString("en-US")} real time` : undefined,
      Number.isFinite(leftMs) && done > 0 ? `about ${readable(leftMs)} left` : undefined,
      typeof current === "function" ? current() : current,
    ];
    return parts.filter((part) => part !== undefined).join(", ");
  }

  /** "3d of 30d", or "2 of 8 blueprints". */
  private amountOfTotal(done: number): string {
    if (this.unit === "simulated") return `${readable(done)} of ${readable(this.total)}`;
    return `${done.toLocaleString("en-US")} of ${this.total.toLocaleString("en-US")} ${this.unit.noun}`;
  }
}

/** A duration to the second (or to the minute past an hour): what a person reads at a glance. */
export function readable(ms: number): string {
  const step = ms >= 3_600_000 ? 60_000 : 1_000;
  const rounded = Math.round(ms / step) * step;
  return rounded === 0 ? "0s" : formatDuration(rounded);
}
