/**
 * `gpusynth run --shard i/n`: every shard simulates the whole cluster and emits its part; the n
 * shards together emit exactly the unsharded run, scrape for scrape and byte for byte, each
 * per-node target on the shard its node's ordinal names, the cluster-wide exporters spread over
 * the first shards and the logs on shard 0.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { captureOutput, repoFile } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "gpusynth-shard-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/**
 * enterprise.yaml with each of its three node pools at 8 nodes (of 32, 16 and 16): node ordinals
 * still count across pools, and 24 nodes spread over any shard count tested, at three eighths of
 * the data to compare. kube-state-metrics runs in 3 shards, so its instances spread too.
 */
const blueprint = join(dir, "enterprise-24-nodes.yaml");
writeFileSync(
  blueprint,
  readFileSync(repoFile("blueprints/enterprise.yaml"), "utf8")
    .replace(/^(\s+nodes:) \d+/gm, "$1 8")
    .replace(/^telemetry:\n/m, "telemetry:\n  kubeStateMetrics: { shards: 3 }\n"),
);

/**
 * The OTLP-JSON lines of a 10-minute offline run of that blueprint (one line per target and
 * scrape: two scrapes, so counters carry on from one to the next), once per shard and worker count.
 */
const runs = new Map<string, Promise<{ metrics: string[]; logs: string[] }>>();
function lines(shard?: string, workers = 1): Promise<{ metrics: string[]; logs: string[] }> {
  const key = `${shard ?? "all"}-${workers}`;
  let run = runs.get(key);
  if (run === undefined) {
    run = runShard(shard, workers);
    runs.set(key, run);
  }
  return run;
}

async function runShard(shard: string | undefined, workers: number): Promise<{ metrics: string[]; logs: string[] }> {
  const name = join(dir, `run-${(shard ?? "all").replace("/", "-of-")}-${workers}`);
  const { output, text } = captureOutput();
  // The Kubernetes events stand for the logs: where logs go is the same for every source.
  const args = [
    "run",
    "--offline",
    "--duration",
    "10m",
    "--interval",
    "5m",
    "--otlp-json",
    `${name}.m`,
    "--otlp-json-logs",
    `${name}.l`,
    "--log-sources",
    "events",
    "--workers",
    String(workers),
  ];
  const code = await main([...args, ...(shard === undefined ? [] : ["--shard", shard]), blueprint], output);
  expect(code, text.err).toBe(0);
  const read = (file: string) =>
    readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l !== "");
  return { metrics: read(`${name}.m`), logs: read(`${name}.l`) };
}

const hostOf = (line: string) => /"server\.address","value":\{"stringValue":"([^"]+)"/.exec(line)?.[1] as string;
/** The exporters every node runs: their targets are spread over the shards by node. */
const PER_NODE_JOBS = ["nvidia-dcgm-exporter", "kubelet", "node-exporter"];

describe("run --shard i/n", () => {
  it.each([2, 3])("emits in %i shards together exactly what the unsharded run emits", async (n) => {
    const whole = await lines();
    const shards = await Promise.all(Array.from({ length: n }, (_, i) => lines(`${i}/${n}`)));
    expect(shards.flatMap((s) => s.metrics).sort()).toEqual([...whole.metrics].sort());
    expect(shards[0]?.logs).toEqual(whole.logs);
    for (const shard of shards.slice(1)) expect(shard.logs).toEqual([]);
    // Each shard holds some per-node targets, and a node's targets are on one shard only.
    for (const job of PER_NODE_JOBS) {
      const hosts = shards.map((s) => new Set(s.metrics.filter((l) => l.includes(`"${job}"`)).map(hostOf)));
      for (const h of hosts) expect(h.size).toBeGreaterThan(0);
      expect(hosts.reduce((sum, h) => sum + h.size, 0)).toBe(new Set(hosts.flatMap((h) => [...h])).size);
    }
    // The cluster-wide exporters by rank, mod n: Run:ai's 0, kube-state-metrics' three instances
    // 1 to 3, the scheduler's 2. An instance is a host of the job.
    const jobsOf = (s: { metrics: string[] }) => {
      const jobs = new Map<string, Set<string>>();
      for (const l of s.metrics) {
        const job = /"service\.name","value":\{"stringValue":"([^"]+)"/.exec(l)?.[1];
        if (job === undefined || PER_NODE_JOBS.includes(job)) continue;
        jobs.set(job, (jobs.get(job) ?? new Set()).add(hostOf(l)));
      }
      return Object.fromEntries([...jobs].map(([job, hosts]) => [job, hosts.size]));
    };
    expect(shards.map(jobsOf)).toEqual(
      n === 2
        ? [
            { "kai-scheduler-default": 1, "kube-state-metrics": 1, "metrics-exporter": 1, "queue-controller": 1 },
            { "kube-state-metrics": 2 },
          ]
        : [
            { "kube-state-metrics": 1, "metrics-exporter": 1 },
            { "kube-state-metrics": 1 },
            { "kai-scheduler-default": 1, "kube-state-metrics": 1, "queue-controller": 1 },
          ],
    );
  });

  it("emits with k worker threads in one process exactly what one thread emits, for the whole run and for a shard", async () => {
    const [whole, threads, shard, shardThreads] = await Promise.all([lines(), lines(undefined, 3), lines("1/2"), lines("1/2", 2)]);
    expect([...threads.metrics].sort()).toEqual([...whole.metrics].sort());
    expect(threads.logs).toEqual(whole.logs);
    expect([...shardThreads.metrics].sort()).toEqual([...shard.metrics].sort());
    expect(shardThreads.logs).toEqual([]);
  });

  it.each(["2/2", "1/0", "a/b", "-1/2"])("refuses --shard %s with exit code 2", async (shard) => {
    const { output, text } = captureOutput();
    expect(await main(["run", "--offline", `--shard=${shard}`, repoFile("blueprints/lab.yaml")], output)).toBe(2);
    expect(text.err).toMatch(/--shard: expected i\/n with 0 <= i < n/);
  });
});
