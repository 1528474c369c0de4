/**
 * Workload arrivals and what each workload will do, drawn when it is submitted. Arrivals are
 * a non-homogeneous Poisson process (Lewis–Shedler thinning) whose rate follows the declared
 * diurnal sinusoid and weekend factor in the users' local time. Each generator draws from its
 * own random streams, so one generator's draws never shift another's.
 */
import type { Blueprint, Ending, WorkloadGenerator, WorkloadKind } from "@gpusynth/blueprint";
import type { Rng } from "./rng.js";
import { sampleDiscrete, sampleDuration } from "./sampling.js";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface WorkloadDraw {
  readonly kind: WorkloadKind;
  readonly user: string;
  readonly gpus: number;
  readonly runMs: number;
  readonly ending: Ending;
}

export class ArrivalProcess {
  private readonly arrivals: Rng;
  private readonly attributes: Rng;
  private readonly maxRatePerMs: number;
  private readonly shares: number[];

  constructor(
    readonly generator: WorkloadGenerator,
    private readonly users: readonly string[],
    private readonly startMs: number,
    private readonly utcOffsetHours: number,
    rng: Rng,
  ) {
    this.arrivals = rng.fork(`arrivals/${generator.name}`);
    this.attributes = rng.fork(`attributes/${generator.name}`);
    const { perDay, diurnal, weekendFactor } = generator.arrivals;
    this.maxRatePerMs = (perDay / DAY_MS) * (diurnal?.peakToMean ?? 1) * Math.max(1, weekendFactor);
    this.shares = generator.mix.map((kind) => kind.share);
  }

  /** Arrival rate (per ms) at simulated time t: the weekday mean shaped by hour and weekday. */
  rateAt(t: number): number {
    const { perDay, diurnal, weekendFactor } = this.generator.arrivals;
    const local = this.startMs + t + this.utcOffsetHours * HOUR_MS;
    const hour = (((local % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS;
    const weekday = new Date(local).getUTCDay(); // 0 Sunday … 6 Saturday, in local time
    let rate = perDay / DAY_MS;
    if (diurnal !== undefined) rate *= 1 + (diurnal.peakToMean - 1) * Math.cos((2 * Math.PI * (hour - diurnal.peakHour)) / 24);
    if (weekday === 0 || weekday === 6) rate *= weekendFactor;
    return rate;
  }

  /** The next submission time strictly after t, or undefined if the rate is zero. */
  nextArrival(t: number): number | undefined {
    if (this.maxRatePerMs <= 0) return undefined;
    let candidate = t;
    for (;;) {
      candidate += Math.max(1, Math.round(this.arrivals.exponential(this.maxRatePerMs)));
      if (this.arrivals.float() * this.maxRatePerMs <= this.rateAt(candidate)) return candidate;
    }
  }

  /** Everything about a new workload that does not depend on the cluster's state. */
  draw(): WorkloadDraw {
    const rng = this.attributes;
    const kind = this.generator.mix[rng.weightedIndex(this.shares)] as WorkloadKind;
    const user = rng.pick(this.users);
    const gpus = sampleDiscrete(kind.gpus, rng.float());
    const durationMs = sampleDuration(kind.duration.min, kind.duration.cdf, rng.float());
    const outcome = rng.float();
    const failP = kind.failure?.probability ?? 0;
    const cancelP = kind.cancel?.probability ?? 0;
    const timing = rng.float();
    let ending: Ending = "complete";
    let runMs = durationMs;
    if (outcome < failP && kind.failure !== undefined) {
      ending = "fail";
      // earlyShare of failures happen within earlyWithin of the start, the rest later in the run.
      const early = Math.min(kind.failure.earlyWithin, durationMs);
      const second = rng.float();
      runMs = second < kind.failure.earlyShare || early >= durationMs ? timing * early : early + timing * (durationMs - early);
    } else if (outcome < failP + cancelP) {
      ending = "cancel";
      runMs = timing * durationMs;
    }
    return { kind, user, gpus, runMs: Math.max(1_000, Math.round(runMs)), ending };
  }
}

export function usersOf(bp: Blueprint, project: string): readonly string[] {
  return bp.projects.find((p) => p.name === project)?.users ?? [];
}
