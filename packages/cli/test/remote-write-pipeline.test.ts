/**
 * The failure journeys on a pipeline of other people's software: the failure scenarios (gpu-fault,
 * crash-loop, memory-pressure) run on simulated time, each pushing OTLP/HTTP protobuf to its own
 * vmagent (VictoriaMetrics 1.112), which forwards it by Prometheus remote write into its own real
 * Prometheus (Debian's, --web.enable-remote-write-receiver). The documented queries of
 * docs/queries.md must answer there what the simulation says happened, as they do on the scrape
 * path (emit/test/journeys.test.ts). On this path the series carry the
 * OTLP resource attributes as labels under their dotted OTLP names (service.name,
 * service.instance.id, server.address, …) instead of a scrape's job and instance: vmagent
 * forwards them so, and Prometheus 2.x stores them but cannot name them in a PromQL matcher. The
 * documented queries use neither.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Simulation } from "@gpusynth/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documented, expectMemoryEvictionFound, expectRestartsFound, podsFailedIn, rows } from "../../emit/test/journey-answers.js";
import { PrometheusServer, prometheusBinary } from "../../emit/test/prometheus-server.js";
import { PushedScenario } from "../../emit/test/pushed-scenario.js";
import { startVictoriaMetrics, victoriaMetricsBinary, vmagentFlags, vmagentForwarded } from "./victoria-metrics.js";

const vmagent = victoriaMetricsBinary("vmagent");
const HOUR = 3_600_000;
const MINUTE = 60_000;

/** A Prometheus remote-write receiver with a vmagent in front of it that takes OTLP. */
class RemoteWritePipeline {
  private agent: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), "gpusynth-vmagent-"));
  prometheus: PrometheusServer | undefined;

  /** Starts both; resolves with vmagent's OTLP metrics URL. */
  async start(): Promise<string> {
    this.prometheus = await PrometheusServer.startRemoteWriteReceiver();
    const api = this.prometheus.api;
    const agent = await startVictoriaMetrics(vmagent, (port) => [...vmagentFlags(port, this.dir), `-remoteWrite.url=${api}/api/v1/write`]);
    this.agent = agent.child;
    return `${agent.url}/opentelemetry/v1/metrics`;
  }

  async stop(): Promise<void> {
    this.agent?.kill("SIGKILL");
    await this.prometheus?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe.skipIf(vmagent === "" || prometheusBinary === "")("the failure scenarios through vmagent and remote write into Prometheus", () => {
  // Every 5 simulated minutes, as the live journeys at ×720 were scraped: what it checks lasts.
  const fault = new PushedScenario("blueprints/scenarios/gpu-fault.yaml", 4 * HOUR, 5 * MINUTE);
  const crashLoop = new PushedScenario("blueprints/scenarios/crash-loop.yaml", 45 * MINUTE);
  const memory = new PushedScenario("blueprints/scenarios/memory-pressure.yaml", 35 * MINUTE);
  const pipelines: RemoteWritePipeline[] = [];
  const events = fault.events;
  const query = (id: string) => fault.query(id);

  beforeAll(async () => {
    const push = async (scenario: PushedScenario) => {
      const pipeline = new RemoteWritePipeline();
      pipelines.push(pipeline);
      await scenario.run(await pipeline.start(), pipeline.prometheus as PrometheusServer);
      await vmagentForwarded([(pipeline.prometheus as PrometheusServer).api], scenario.stamp(scenario.lastScrape));
    };
    await Promise.all([fault, crashLoop, memory].map(push));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(pipelines.map((p) => p.stop()));
  });

  it("finds the failed pods and the nodes they ran on, as on the scrape path", async () => {
    const failed = podsFailedIn(events);
    expect(failed.length).toBe(2);
    expect(rows(await query("failed-pods"), ["namespace", "pod"])).toEqual(failed.map((f) => `${f.namespace} ${f.pod.name}`).sort());
    expect(rows(await query("failed-pod-nodes"), ["namespace", "pod", "node"])).toEqual(
      failed.map((f) => `${f.namespace} ${f.pod.name} ${f.pod.node}`).sort(),
    );
  });

  it("finds the GPUs the failed pods held, by index and UUID", async () => {
    const failed = podsFailedIn(events).map((f) => f.pod);
    const names = new Set(failed.map((p) => p.name));
    const held = (await query("pod-gpus")).filter((s) => names.has(s.metric.pod as string));
    expect(rows(held, ["pod", "Hostname", "gpu", "UUID"])).toEqual(
      failed.flatMap((p) => p.gpus.map((g) => `${p.name} ${p.node} ${g.index} ${g.uuid}`)).sort(),
    );
  });

  it("finds the XID that failed a pod on the GPU it held, and each node's pool", async () => {
    const ecc = podsFailedIn(events).filter(
      (f) =>
        f.cause.kind === "GpuFault" &&
        f.cause.xid === 95 &&
        f.pod.gpus.some((g) => f.cause.kind === "GpuFault" && g.uuid === f.cause.gpu.uuid),
    );
    expect(ecc.length).toBe(1);
    const [{ pod, cause }] = ecc as [(typeof ecc)[number]];
    if (cause.kind !== "GpuFault") throw new Error("the scenario changed");
    const hit = (await query("xid-pods")).filter((s) => s.metric.pod === pod.name);
    expect(hit.map((s) => [s.metric.UUID, s.metric.err_code, Number(s.value[1])])).toEqual([[cause.gpu.uuid, "95", 95]]);
    const { pools } = new Simulation(fault.blueprint).view();
    expect(rows(await query("node-pool-of-node"), ["node", "label_runai_node_pool"])).toEqual(
      pools.flatMap((p) => p.nodes.map((n) => `${n.name} ${p.spec.nodeLabel.value}`)).sort(),
    );
  });

  it("answers every documented query without error, most of them with series", async () => {
    // The push carries each exporter's own labels, as a scrape with honor_labels does: the forms
    // for the GPU Operator's ServiceMonitor (exported_pod, …) find nothing here.
    const plain = [...documented.keys()].filter((id) => !id.endsWith("-exported"));
    for (const id of documented.keys()) if (id.endsWith("-exported")) expect(await query(id), id).toEqual([]);
    let answered = 0;
    for (const id of plain) if ((await query(id)).length > 0) answered++;
    expect(plain.length).toBeGreaterThan(15);
    expect(answered).toBeGreaterThan(plain.length / 2);
  });

  it("carries the OTLP resource as dotted labels where a scrape would set job and instance", async () => {
    const util = await fault.prometheus.query("DCGM_FI_DEV_GPU_UTIL", fault.stamp(fault.durationMs));
    expect(util.length).toBeGreaterThan(0);
    for (const s of util) {
      // vmagent forwards the resource attributes under their OTLP names; Prometheus 2.x stores
      // them but its PromQL cannot name them in a matcher (Prometheus 3 quotes UTF-8 names).
      expect(s.metric["service.name"]).toBe("nvidia-dcgm-exporter");
      expect(s.metric["service.instance.id"]).toBe(`${s.metric.Hostname}:9400`);
      expect(s.metric).not.toHaveProperty("job");
      expect(s.metric).not.toHaveProperty("instance");
    }
  });

  it("finds the crash-looping job's pod with the restarts the kubelet made, as on the scrape path", async () => {
    await expectRestartsFound(crashLoop.events, (id) => crashLoop.query(id));
  });

  it("finds the pod the kubelet evicted and the node under memory pressure, as on the scrape path", async () => {
    await expectMemoryEvictionFound(memory.events, (id) => memory.query(id));
  });
});
