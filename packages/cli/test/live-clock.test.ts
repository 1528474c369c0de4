/**
 * One clock, a warm start: a live run serves a cluster that is already working, and every time
 * it emits is on the scraper's clock — the time-valued series a dashboard subtracts from time()
 * lie in the recent past, never in the future and never on the blueprint's calendar.
 */
import { servingStartMs } from "@gpusynth/emit";
import { afterEach, describe, expect, it } from "vitest";
import { ensureStopped, type LiveProcess, startLive } from "./live-process.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let live: LiveProcess | undefined;
afterEach(() => ensureStopped(live));

interface Series {
  readonly name: string;
  readonly labels: string;
  readonly value: number;
}

/** Every series of every target the run serves, scraped once. */
async function scrapeAll(base: string): Promise<Series[]> {
  const targets = (await (await fetch(`${base}/sd`)).json()) as Array<{ labels: Record<string, string> }>;
  const series: Series[] = [];
  for (const target of targets) {
    const text = await (await fetch(`${base}${target.labels.__metrics_path__}`)).text();
    for (const line of text.split("\n")) {
      const match = /^([a-zA-Z_:][\w:]*)(\{.*\})? (\S+)$/.exec(line);
      if (match !== null) series.push({ name: match[1] as string, labels: match[2] ?? "", value: Number(match[3]) });
    }
  }
  return series;
}

describe("a live run's clock", () => {
  it("serves a warm cluster whose time-valued series are in the scraper's recent past", async () => {
    live = startLive(["--speed", "60", "--interval", "500ms", "--listen", "127.0.0.1:0", "blueprints/lab.yaml"]);
    const base = await live.scrapeUrl();
    await live.waitFor(/\d running, \d+ pending/);
    const scrapedAt = Date.now() / 1000;
    const series = await scrapeAll(base);
    // Warm: the day's work is under way at the first scrape.
    const running = series.filter((s) => s.name === "kube_pod_status_phase" && s.labels.includes('phase="Running"') && s.value === 1);
    expect(running.length).toBeGreaterThan(0);
    // A simulated day before serving is 24 wall minutes ago at ×60; nothing is in the future. The
    // users' pods were made during the warm-up; the system's when the cluster was installed, long before.
    const users = (s: Series) => !s.name.startsWith("kube_pod_") || s.labels.includes('namespace="runai-');
    for (const name of ["kube_pod_start_time", "kube_pod_created", "runai_last_gpu_utilization_time_per_gpu"]) {
      const times = series.filter((s) => s.name === name && users(s) && s.value > 0).map((s) => s.value);
      expect(times.length, name).toBeGreaterThan(0);
      for (const t of times) {
        expect(t, name).toBeLessThanOrEqual(scrapedAt + 1);
        expect(t, name).toBeGreaterThan(scrapedAt - (2 * DAY) / 60 / 1000);
      }
    }
    const installed = series.filter((s) => s.name === "kube_pod_created" && !users(s)).map((s) => s.value);
    expect(installed.length).toBeGreaterThan(0);
    for (const t of installed) expect(t).toBeLessThan(scrapedAt - (2 * DAY) / 60 / 1000);
    expect(live.stderr()).toMatch(/warming up: simulating 1d before serving/);
    await live.stop("SIGINT");
    // The closing line names the consumers' time and the blueprint's calendar apart.
    expect(live.stderr()).toMatch(/stopped at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ, the cluster's 2026-01-06 00:\d\d \(\+1d/);
  }, 30_000);
});

describe("where serving starts", () => {
  const start = Date.UTC(2026, 0, 5); // a Monday, 00:00 UTC

  it("is the warm-up itself at any speed but ×1", () => {
    expect(servingStartMs(start, DAY, 60, Date.UTC(2026, 11, 3, 15, 47))).toBe(DAY);
  });

  it("at ×1, is at least the warm-up and at the real time of day", () => {
    const now = Date.UTC(2026, 11, 3, 15, 47, 12);
    const serving = servingStartMs(start, DAY, 1, now);
    expect(serving).toBeGreaterThanOrEqual(DAY);
    expect(serving).toBeLessThan(2 * DAY);
    expect((start + serving) % DAY).toBe(now % DAY);
  });

  it("is time.start itself for a cold start, whatever the speed", () => {
    expect(servingStartMs(start, 0, 1, Date.UTC(2026, 11, 3, 15, 47))).toBe(0);
  });
});
