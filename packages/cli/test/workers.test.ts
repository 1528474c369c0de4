/**
 * `gpusynth run --workers k`: k worker threads, each emitting a shard of the process's part,
 * behind one scrape server and one OTLP pipeline. What a consumer sees is the one-thread run:
 * every target once per scrape, served and pushed from one address, with one delivery report.
 */
import { describe, expect, it } from "vitest";
import { attributeMap, receivedPoints, startReceiver } from "../../emit/test/otlp-receiver.js";
import { main } from "../src/main.js";
import { captureOutput, repoFile } from "./helpers.js";
import { CLUSTER_JOBS, deliveryReport, ensureStopped, type LiveProcess, startLive } from "./live-process.js";

const scenario = "blueprints/scenarios/preemption-storm.yaml";

/** Each scrape's pushed targets, by point time: "job/instance" sorted. */
async function pushedTargets(workers: number): Promise<{ byTime: Map<string, string[]>; stderr: string; stdout: string; points: number }> {
  const receiver = await startReceiver();
  // Three frames, 100 ms (6 simulated minutes) apart.
  const live = startLive(
    ["--speed", "3600", "--interval", "100ms", "--duration", "200ms", "--listen", "none", "--workers", String(workers), "--json", scenario],
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    },
  );
  const { code } = await live.exited();
  await receiver.close();
  expect(code, live.stderr()).toBe(0);
  const byTime = new Map<string, string[]>();
  for (const request of receiver.requests)
    for (const rm of request.resourceMetrics) {
      const attributes = attributeMap(rm.resource.attributes);
      const point = rm.scopeMetrics[0]?.metrics[0]?.gauge?.dataPoints[0] ?? rm.scopeMetrics[0]?.metrics[0]?.sum?.dataPoints[0];
      const time = point?.timeUnixNano;
      // A target is its resource, and its path where one address serves two (the kubelet's metrics_path).
      const path = attributeMap(point?.attributes ?? []).metrics_path;
      const list = byTime.get(String(time)) ?? [];
      list.push(
        `${String(attributes["service.name"])}/${String(attributes["service.instance.id"])}${path === undefined ? "" : String(path)}`,
      );
      byTime.set(String(time), list);
    }
  for (const list of byTime.values()) list.sort();
  return { byTime, stderr: live.stderr(), stdout: live.stdout(), points: receivedPoints(receiver) };
}

describe("run --workers k", () => {
  it("pushes every target once per scrape through one OTLP pipeline, as one thread does", async () => {
    const [one, three] = await Promise.all([pushedTargets(1), pushedTargets(3)]);
    expect(three.stderr).toContain("3 worker threads emit the metrics");
    // The same targets in every scrape, none twice (how many scrapes fit in 200 ms varies).
    const scrapes = (r: typeof one) => [...r.byTime.values()];
    expect(scrapes(three).length).toBeGreaterThan(0);
    for (const scrape of scrapes(three)) {
      expect(new Set(scrape).size).toBe(scrape.length);
      expect(scrape).toEqual(scrapes(one)[0]);
    }
    // One delivery report for all the workers' points: everything delivered.
    const report = deliveryReport(three.stdout, "metrics");
    expect(report.nothingLost).toBe(true);
    expect(report.delivered).toBe(three.points);
  }, 60_000);

  it("serves every worker's targets from one scrape server and one /sd", async () => {
    let live: LiveProcess | undefined;
    try {
      live = startLive(["--speed", "60", "--interval", "2s", "--duration", "20s", "--listen", "127.0.0.1:0", "--workers", "2", scenario]);
      const base = await live.scrapeUrl();
      let listed: Array<{ labels: Record<string, string> }> = [];
      for (let tries = 0; listed.length === 0 && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        listed = (await (await fetch(`${base}/sd`)).json()) as typeof listed;
      }
      const jobs = new Set(listed.map((entry) => entry.labels.job));
      expect([...jobs].sort()).toEqual(CLUSTER_JOBS);
      for (const entry of listed) {
        const response = await fetch(`${base}${entry.labels.__metrics_path__}`);
        expect(response.status, entry.labels.__metrics_path__).toBe(200);
        expect(await response.text()).toMatch(/^# (HELP|TYPE) /);
      }
    } finally {
      ensureStopped(live);
    }
  }, 60_000);

  it("refuses a count that leaves one worker over the ceiling, naming the blueprint and the count that fits", async () => {
    const { output, text } = captureOutput();
    expect(await main(["run", "--workers", "2", repoFile("blueprints/hyperscale.yaml")], output)).toBe(2);
    expect(text.err).toMatch(
      /--workers 2: .*hyperscale\.yaml puts up to 51,200 GPUs on one worker, and one emits at most 16,384 .*: use --workers 7 or more/,
    );
  });

  it.each(["0", "x", "1.5"])("refuses --workers %s", async (k) => {
    const { output, text } = captureOutput();
    expect(await main(["run", "--offline", `--workers=${k}`, repoFile("blueprints/lab.yaml")], output)).toBe(2);
    expect(text.err).toMatch(/--workers: expected an integer from 1 to 256/);
  });
});
