/**
 * Start times the way the prometheus receiver assigns them (metrics_adjuster.go): a cumulative
 * series starts at its first scrape; a later point reuses that start unless the value went
 * down, which marks a reset and starts the series again at that point. Gauges have none.
 */

export class StartTimeAdjuster {
  private readonly series = new Map<string, { start: number; value: number }>();

  /** The start time (ms) of a cumulative point of `key` with `value` observed at `time`. */
  startOf(key: string, value: number, time: number): number {
    const known = this.series.get(key);
    if (known === undefined || value < known.value) {
      this.series.set(key, { start: time, value });
      return time;
    }
    known.value = value;
    return known.start;
  }

  /** Forgets series not seen in the last scrape (the receiver drops stale series). */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.series.keys()) if (!keys.has(key)) this.series.delete(key);
  }
}
