/**
 * kube-state-metrics' own metrics (its telemetry port), one instance's: what it listed and watched, its shard,
 * its custom-resource cache. Each resource it serves is listed once when it starts (its
 * reflector's List, pkg/watch/watch.go counts it), then watched; client-go's reflector ends each
 * watch after a random 5 to 10 minutes (tools/cache/reflector.go@v0.30.3, the client-go
 * kube-state-metrics v2.13.0 requires: minWatchTimeout × (1 + rand)) and watches again, so the
 * watch counter grows by one every 7.5 minutes on average. Counters start over when its pod
 * restarts (its node rebooted).
 */
import type { DomainEvent } from "@gpusynth/sim";
import { type SeriesColumns, seriesLabels, TargetSeries } from "../catalogue.js";
import { between } from "../noise.js";
import type { SystemPod } from "../system-workloads.js";
import { KSM_SELF } from "./families.js";

type Labels = Readonly<Record<string, string>>;

/**
 * The resources it serves, as `reflect.TypeOf(expectedType).String()` names them (builder.go):
 * the ones whose families gpusynth emits (signals/kube-state-metrics.md: `--resources` assumed).
 */
export const WATCHED_RESOURCES = ["*v1.DaemonSet", "*v1.Deployment", "*v1.Namespace", "*v1.Node", "*v1.Pod", "*v1.ReplicaSet"] as const;

const MINUTE = 60_000;
/** client-go's minWatchTimeout: a watch lasts between it and twice it. */
const MIN_WATCH_MS = 5 * MINUTE;
/** A watch lasts 7.5 minutes on average. */
const MEAN_WATCH_MS = 1.5 * MIN_WATCH_MS;

/**
 * One resource's reflector since kube-state-metrics started: the watches it has begun by a time.
 * Each lasts its own random 5 to 10 minutes (drawn from its identity, so the count is a function
 * of the time alone); the ends are worked out once, as far as anyone has asked.
 *
 * A pod that started before the run (system pods are installed 30 to 180 days earlier) has begun
 * one watch every 7.5 minutes on average by the run's start — the count there is drawn about that
 * mean with a renewal count's spread, as nothing before the start is ever read — and is part way
 * through one then, which ends within 10 minutes; from there each watch is drawn. Drawing every
 * watch since the install took 35,000 draws a resource before the first frame.
 */
export class Reflector {
  /** Watches begun by `from`, the one in progress there included. */
  private readonly before: number;
  /** Where the drawn watches begin: the start, or the run's start for a pod started before it. */
  private readonly from: number;
  /** When each watch in progress at `from` or begun after it ended, ms after the start. */
  private readonly ends: number[] = [];

  constructor(
    /** What its draws are keyed by: the resource, and the instance where several run. */
    private readonly resource: string,
    private readonly startedAt: number,
  ) {
    if (startedAt >= 0) {
      // The list, and the first watch, at the start.
      this.from = 0;
      this.before = 1;
    } else {
      this.from = -startedAt;
      // A renewal count after time T: mean T/μ, variance T·σ²/μ³ (σ² of a uniform 5 to 10 minutes:
      // (5 min)²/12), drawn about as a normal from the sum of three uniform draws.
      const key = `${resource}/${startedAt}/watch/before-run-start`;
      const z = 2 * (between(key, 0, 1, 0) + between(key, 0, 1, 1) + between(key, 0, 1, 2) - 1.5);
      const spread = Math.sqrt((this.from * MIN_WATCH_MS ** 2) / 12 / MEAN_WATCH_MS ** 3);
      this.before = 1 + Math.max(0, Math.round(this.from / MEAN_WATCH_MS + z * spread));
      this.ends.push(this.from + between(`${resource}/${startedAt}/watch/at-run-start`, 0, 2 * MIN_WATCH_MS));
    }
  }

  /** The watches begun by `elapsed` ms after the start: the first, and one after each that ended. */
  watchesBy(elapsed: number): number {
    if (elapsed < 0) return 0;
    if (elapsed < this.from) return 1 + Math.floor(elapsed / MEAN_WATCH_MS);
    const { ends } = this;
    while (ends.length === 0 || (ends.at(-1) as number) <= elapsed)
      ends.push((ends.at(-1) ?? this.from) + MIN_WATCH_MS * (1 + between(`${this.resource}/${this.startedAt}/watch/${ends.length}`, 0, 1)));
    // The ends rise; count those at or before `elapsed`: a new watch began at each.
    let low = 0;
    let high = ends.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((ends[mid] as number) <= elapsed) low = mid + 1;
      else high = mid;
    }
    return this.before + low;
  }
}

/** Which shard an instance is: its StatefulSet pod's ordinal, of the replicas (one unsharded instance: 0 of 1). */
export interface KsmShard {
  readonly ordinal: number;
  readonly total: number;
}

export class KsmSelfMetrics {
  /** When kube-state-metrics last started: its pod's start, or its node's return from a reboot. */
  private startedAt: number;
  private reflectors: readonly Reflector[];

  constructor(
    private readonly pod: SystemPod,
    private readonly shard: KsmShard = { ordinal: 0, total: 1 },
  ) {
    this.startedAt = pod.startedAt;
    this.reflectors = this.startReflectors();
    this.labels = {
      none: seriesLabels(KSM_SELF.crdCache, {}),
      lists: WATCHED_RESOURCES.map((resource) => seriesLabels(KSM_SELF.listTotal, { resource, result: "success" })),
      shard: seriesLabels(KSM_SELF.shardOrdinal, { shard_ordinal: String(shard.ordinal) }),
      watches: WATCHED_RESOURCES.map((resource) => seriesLabels(KSM_SELF.watchTotal, { resource, result: "success" })),
    };
  }

  readonly record = (event: DomainEvent): void => {
    if (event.kind === "NodeReady" && event.node === this.pod.node) {
      this.startedAt = event.t;
      this.reflectors = this.startReflectors();
    }
  };

  private startReflectors(): readonly Reflector[] {
    // One instance keeps the draws it always had; each of several draws its own.
    const key = (resource: string) => (this.shard.total === 1 ? resource : `${this.pod.name}/${resource}`);
    return WATCHED_RESOURCES.map((resource) => new Reflector(key(resource), this.startedAt));
  }

  /**
   * Its series' label sets, made once: none of them changes while the instance lives, and a series
   * keeps its label set (and what encoders kept with it) from one scrape to the next.
   */
  /** Its telemetry endpoint's series, kept from one scrape to the next. */
  private readonly series = new TargetSeries();
  private readonly labels: {
    readonly none: Labels;
    readonly lists: readonly Labels[];
    readonly shard: Labels;
    readonly watches: readonly Labels[];
  };

  /** In the order client_golang's Gather writes them: sorted by name. */
  collect(now: number): SeriesColumns {
    const { labels, startedAt } = this;
    const out = this.series.begin();
    out.add(KSM_SELF.crdAdds, labels.none, 0, startedAt);
    out.add(KSM_SELF.crdCache, labels.none, 0);
    out.add(KSM_SELF.crdDeletes, labels.none, 0, startedAt);
    for (const set of labels.lists) out.add(KSM_SELF.listTotal, set, 1, startedAt);
    // Its shard (internal/store/builder.go WithSharding; unsharded: --shard 0, --total-shards 1).
    const { ordinal, total } = this.shard;
    out.add(KSM_SELF.shardOrdinal, labels.shard, ordinal);
    out.add(KSM_SELF.totalShards, labels.none, total);
    labels.watches.forEach((set, i) => {
      const watches = (this.reflectors[i] as Reflector).watchesBy(now - startedAt);
      out.add(KSM_SELF.watchTotal, set, watches, startedAt);
    });
    return out.end();
  }
}
