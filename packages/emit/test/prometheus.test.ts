/**
 * A real Prometheus server (the Debian package; .ci/run installs it) scrapes gpusynth through
 * its HTTP service discovery; its HTTP API then proves every documented family is present with
 * its documented labels and the emulated job and instance. promtool parses every exposition.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, LABEL_PATTERN, type TargetSamples } from "@gpusynth/constructs";
import { exposition, expositionChunks, ScrapeServer, SD_PATH } from "@gpusynth/emit";
import { simulatedMs } from "@gpusynth/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSignals } from "../../cli/src/signals-doc.js";
import { PrometheusServer, prometheusBinary, which } from "./prometheus-server.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

describe.skipIf(prometheusBinary === "")("a real Prometheus scrapes gpusynth", () => {
  // Each exposition served in chunks of 50 lines (65,536 in a run, where only a target of hyperscale's
  // size needs more than one): everything below is read from chunked bodies.
  const server = new ScrapeServer(undefined, 50);
  let prometheus: PrometheusServer | undefined;
  let collected: readonly TargetSamples[] = [];
  let sdUrl = "";
  /** When every target was up: the PromQL checks query at it (a scrape that times out later marks its series stale). */
  let allUp = 0;

  const query = (path: string) => (prometheus as PrometheusServer).get(path);

  beforeAll(async () => {
    // The preemption-storm scenario at 01:45: reclaimed and preempted workloads pending again,
    // evictions counted, the owner's first job finished (its pod still listed).
    const { blueprint } = loadBlueprint(repo("blueprints/scenarios/preemption-storm.yaml"));
    drive(new ClusterRun(blueprint), [simulatedMs(105 * 60_000)], (frame) => {
      collected = frame.targets;
    });
    server.update(collected);
    const sd = await server.listen("127.0.0.1", 0);
    sdUrl = `http://127.0.0.1:${sd.port}${SD_PATH}`;
    prometheus = await PrometheusServer.start(sdUrl);
    allUp = await prometheus.waitForTargets(collected.length);
  }, 90_000);

  afterAll(async () => {
    await prometheus?.stop();
    await server.close();
  });

  it("finds every target up under its emulated job and instance", async () => {
    const up = (await query("/api/v1/query?query=up")) as { result: Array<{ metric: Record<string, string> }> };
    const found = up.result.map((r) => `${r.metric.job} ${r.metric.instance}`).sort();
    expect(found).toEqual(collected.map((t) => `${t.target.job} ${t.target.host}:${t.target.port}`).sort());
  });

  it("serves, for the exporters whose install is pinned, only the discovery meta labels signals/ documents", async () => {
    const sd = (await (await fetch(sdUrl)).json()) as Array<{ labels: Record<string, string> }>;
    // dcgm-exporter's pods (signals/dcgm-exporter.md) and the kubelet's nodes (signals/kubelet.md).
    const documented = ["dcgm-exporter", "kubelet"].map((area) => readFileSync(repo(`signals/${area}.md`), "utf8")).join("\n");
    const served = new Set(
      sd.flatMap((group) =>
        Object.keys(group.labels)
          .filter((l) => l.startsWith("__meta_"))
          .map((l) => l.replace(/^(__meta_kubernetes_service_label(?:present)?_).*/, "$1<name>")),
      ),
    );
    expect(served.size).toBeGreaterThan(0);
    for (const label of served) expect(documented, `${label} is not in signals/dcgm-exporter.md or kubelet.md`).toContain(`\`${label}\``);
    // Exactly the GPU nodes' exporters carry them, each its own pod in the GPU Operator's namespace.
    const pods = sd.filter((g) => g.labels.__meta_kubernetes_pod_name !== undefined);
    expect(new Set(pods.map((g) => g.labels.job))).toEqual(new Set(["nvidia-dcgm-exporter"]));
    expect(new Set(pods.map((g) => g.labels.__meta_kubernetes_pod_name)).size).toBe(pods.length);
  });

  it("holds every family the scenario emits, each documented and with only documented labels", async () => {
    // Which families a run emits depends on what happens in it (crash loops, evictions): the
    // signal-fidelity check covers the shipped blueprints together; here every family served
    // must arrive, documented.
    const served = new Set(collected.flatMap((t) => t.samples.map((s) => s.family.name)));
    const documented = readSignals(repo("signals")).filter((d) => d.status === "emitted" && served.has(d.name));
    expect(documented.map((d) => d.name).sort()).toEqual([...served].sort());
    const missing: string[] = [];
    const undocumented: string[] = [];
    // Labels discovery gives a target (the kubelet's metrics_path: signals/kubelet.md), which Prometheus adds to its series.
    const targetLabels = new Set(collected.flatMap((t) => Object.keys(t.target.labels ?? {})));
    for (const family of documented) {
      const series = (await query(`/api/v1/series?match[]=${encodeURIComponent(family.name)}`)) as Array<Record<string, string>>;
      if (series.length === 0) missing.push(family.name);
      for (const s of series) {
        for (const label of Object.keys(s)) {
          const allowed =
            ["__name__", "job", "instance"].includes(label) ||
            targetLabels.has(label) ||
            family.labels.includes(label) ||
            (label.startsWith("label_") && family.labels.includes(LABEL_PATTERN));
          if (!allowed) undocumented.push(`${family.name}{${label}}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect([...new Set(undocumented)]).toEqual([]);
  });

  it("answers PromQL with the simulation's numbers", async () => {
    const held = collected
      .flatMap((t) => t.samples)
      .filter((s) => s.family.name === "DCGM_FI_DEV_GPU_UTIL" && s.labels.pod !== undefined).length;
    const result = (await query(`/api/v1/query?query=${encodeURIComponent('count(DCGM_FI_DEV_GPU_UTIL{pod!=""})')}&time=${allUp}`)) as {
      result: Array<{ value: [number, string] }>;
    };
    expect(Number(result.result[0]?.value[1])).toBe(held);
    const evictions = (await query(
      `/api/v1/query?query=${encodeURIComponent("sum by (action) (kai_pod_group_evicted_pods_total)")}&time=${allUp}`,
    )) as {
      result: Array<{ metric: { action: string }; value: [number, string] }>;
    };
    expect(evictions.result.map((r) => r.metric.action).sort()).toEqual(["preempt", "reclaim"]);
  });

  it("runs every query in docs/queries.md without error", async () => {
    const queries = [...readFileSync(repo("docs/queries.md"), "utf8").matchAll(/```promql\n([\s\S]*?)```/g)].map((m) =>
      (m[1] as string).trim(),
    );
    expect(queries.length).toBeGreaterThan(0);
    for (const q of queries) await query(`/api/v1/query?query=${encodeURIComponent(q)}`);
    // The storm's evictions answer per action, as the query documents.
    const storm = (await query(
      `/api/v1/query?query=${encodeURIComponent("sum by (action) (kai_pod_group_evicted_pods_total)")}&time=${allUp}`,
    )) as {
      result: unknown[];
    };
    expect(storm.result.length).toBe(2);
  });

  it("cuts an exposition into chunks of whole lines, in order", () => {
    const largest = collected.reduce((a, b) => (b.samples.length > a.samples.length ? b : a));
    const chunks = expositionChunks(largest.samples, 50);
    expect(chunks.length).toBeGreaterThan(2);
    const lines = chunks.map((chunk) => chunk.split("\n").length - 1);
    expect(new Set(lines.slice(0, -1))).toEqual(new Set([50]));
    expect(lines.at(-1)).toBeGreaterThan(0);
    expect(lines.at(-1)).toBeLessThanOrEqual(50);
    expect(chunks.every((chunk) => chunk.endsWith("\n"))).toBe(true);
    expect(chunks.join("")).toBe(exposition(largest.samples));
  });

  it("serves expositions promtool can parse", () => {
    const promtool = which("promtool");
    if (promtool === "") return;
    for (const { target, samples } of collected) {
      const result = spawnSync(promtool, ["check", "metrics"], { input: exposition(samples), encoding: "utf8" });
      // Vendor names break Prometheus naming conventions on purpose (no _total, upper case):
      // lint hints are expected, parse errors are not.
      expect(`${result.stdout}${result.stderr}`, target.job).not.toMatch(/error while linting|parsing error|text format parsing/i);
    }
  });
});
