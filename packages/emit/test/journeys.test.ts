/**
 * The failure journeys end to end: each shipped scenario runs live and accelerated while a real
 * Prometheus scrapes gpusynth through its service discovery; the queries of docs/queries.md,
 * sent to Prometheus' HTTP API, must answer what the simulation says happened — the failed
 * workloads' pods, nodes, GPUs and XIDs, the backlog's peak, the evicted workloads.
 *
 * Ground truth comes from a second, in-process run of the same blueprint (runs are
 * deterministic), never from the telemetry itself.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Blueprint, loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, type TargetSamples } from "@gpusynth/constructs";
import { type DomainEvent, podGroupName, Simulation, simulatedMs } from "@gpusynth/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runLive } from "../src/live.js";
import { ScrapeServer, SD_PATH } from "../src/scrape-server.js";
import { expectMemoryEvictionFound, expectRestartsFound, podsFailedIn, rows } from "./journey-answers.js";
import { type InstantSample, PrometheusServer, prometheusBinary } from "./prometheus-server.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Simulated seconds per wall second, by default: 12 simulated minutes pass every second. */
const SPEED = 720;
/** Wall-clock interval of gpusynth's refresh and of Prometheus' scrapes. */
const TICK_MS = 500;

/** docs/queries.md's queries by the id in the comment above each block. */
const documented = new Map(
  [...readFileSync(repo("docs/queries.md"), "utf8").matchAll(/<!-- query: ([\w-]+) -->\n```promql\n([\s\S]*?)```/g)].map((m) => [
    m[1] as string,
    (m[2] as string).trim(),
  ]),
);
const documentedQuery = (id: string): string => {
  const query = documented.get(id);
  if (query === undefined) throw new Error(`docs/queries.md has no query "${id}"`);
  return query;
};

/** A scenario running live under its own Prometheus, with the wall-clock time of each tick. */
class LiveScenario {
  readonly blueprint: Blueprint;
  readonly events: DomainEvent[] = [];
  private readonly server = new ScrapeServer();
  private readonly ticks: Array<{ simulatedMs: number; wallMs: number }> = [];
  private readonly abort = new AbortController();
  prometheus: PrometheusServer | undefined;
  /** A second Prometheus scraping the same run as the GPU Operator's ServiceMonitor would. */
  operatorPrometheus: PrometheusServer | undefined;

  constructor(
    file: string,
    readonly durationMs: number,
    private readonly speed = SPEED,
    private readonly underOperator = false,
  ) {
    this.blueprint = loadBlueprint(repo(file)).blueprint;
    const truth = new Simulation(this.blueprint);
    truth.onEvent((event) => this.events.push(event));
    truth.runUntil(durationMs);
  }

  async run(): Promise<void> {
    const sd = await this.server.listen("127.0.0.1", 0);
    const sdUrl = `http://127.0.0.1:${sd.port}${SD_PATH}`;
    this.prometheus = await PrometheusServer.start(sdUrl, `${TICK_MS}ms`);
    if (this.underOperator)
      this.operatorPrometheus = await PrometheusServer.startWithScrapeConfigs(
        repo("deploy/prometheus/gpu-operator.yml"),
        sdUrl,
        `${TICK_MS}ms`,
      );
    // Prometheus applies discovered targets every few seconds (minutes of simulated time at this
    // speed): serve the cluster as it starts and wait for every target before the clock runs.
    let targets: readonly TargetSamples[] = [];
    drive(new ClusterRun(this.blueprint), [simulatedMs(0)], (frame) => {
      targets = frame.targets;
    });
    this.server.update(targets);
    await Promise.all([this.prometheus, this.operatorPrometheus].map((p) => p?.waitForTargets(targets.length)));
    await runLive(this.blueprint, {
      speed: this.speed,
      // The scenario's story from its start, for its simulated duration.
      warmupMs: 0,
      intervalMs: TICK_MS,
      durationMs: this.durationMs / this.speed,
      // The checks read the whole story: on a busy machine the simulation may fall behind ×speed,
      // and the last frame then simulates the rest instead of ending short on time.
      lastFrameCatchUpMs: 60_000,
      server: this.server,
      signal: this.abort.signal,
      onTick: (status) => this.ticks.push({ simulatedMs: status.simulatedMs, wallMs: Date.now() }),
    });
    // Let Prometheus scrape the final state twice.
    await new Promise((resolve) => setTimeout(resolve, 3 * TICK_MS));
  }

  /** The wall-clock moment by which Prometheus has scraped the state at `simulatedMs`. */
  scrapedBy(simulatedMs: number): number {
    const tick = this.ticks.find((t) => t.simulatedMs >= simulatedMs);
    if (tick === undefined) throw new Error(`the run never reached ${simulatedMs} ms`);
    return tick.wallMs + 3 * TICK_MS;
  }

  /** The simulated time of the frame the run served at wall-clock `wallMs` (the last tick before it). */
  simulatedAt(wallMs: number): number {
    let served = 0;
    for (const tick of this.ticks) if (tick.wallMs <= wallMs) served = tick.simulatedMs;
    return served;
  }

  get startWallMs(): number {
    return (this.ticks[0] as { wallMs: number }).wallMs;
  }

  query(id: string, atMs?: number): Promise<InstantSample[]> {
    return (this.prometheus as PrometheusServer).query(documentedQuery(id), atMs);
  }

  /** A documented query sent to the Prometheus that scrapes as the GPU Operator's ServiceMonitor. */
  queryUnderOperator(id: string, atMs?: number): Promise<InstantSample[]> {
    if (this.operatorPrometheus === undefined) throw new Error("this scenario runs without the GPU Operator's scrape setup");
    return this.operatorPrometheus.query(documentedQuery(id), atMs);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.operatorPrometheus?.stop();
    await this.prometheus?.stop();
    await this.server.close();
  }
}

describe.skipIf(prometheusBinary === "")("failure journeys on a real Prometheus", () => {
  // Scraped twice: as docs/queries.md's walk reads it, and as the GPU Operator's ServiceMonitor does.
  const fault = new LiveScenario("blueprints/scenarios/gpu-fault.yaml", 4 * HOUR, SPEED, true);
  const quota = new LiveScenario("blueprints/scenarios/quota-exhaustion.yaml", 150 * MINUTE);
  const storm = new LiveScenario("blueprints/scenarios/preemption-storm.yaml", 2 * HOUR);
  // Slower: its back-offs last seconds to minutes, and Prometheus must see them.
  const crashLoop = new LiveScenario("blueprints/scenarios/crash-loop.yaml", 45 * MINUTE, 120);
  // Slower too: the pressure lasts five simulated minutes.
  const memory = new LiveScenario("blueprints/scenarios/memory-pressure.yaml", 35 * MINUTE, 120);
  const scenarios = [fault, quota, storm, crashLoop, memory];
  // Run on its own after the others (its describe's beforeAll), so the five above, whose checks
  // read narrow windows, do not share the two cores with a sixth run and its Prometheus.
  const oom = new LiveScenario("blueprints/scenarios/oom-kill.yaml", 70 * MINUTE);
  // On its own too: the first hour, the power cap from 00:30.
  const straggler = new LiveScenario("blueprints/scenarios/straggler.yaml", HOUR);

  beforeAll(async () => {
    await Promise.all(scenarios.map((s) => s.run()));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(scenarios.map((s) => s.stop()));
  });

  describe("the walk from a failed workload (gpu-fault)", () => {
    const failedPods = podsFailedIn(fault.events);

    it("finds the failed pods after they are gone", async () => {
      // The gang's rank on the faulted GPU and the 4-GPU job's pod; the gang's other rank was
      // evicted by KAI (deleted), not failed.
      expect(failedPods.length).toBe(2);
      expect(rows(await fault.query("failed-pods"), ["namespace", "pod"])).toEqual(
        failedPods.map((f) => `${f.namespace} ${f.pod.name}`).sort(),
      );
    });

    it("finds the node each failed pod ran on", async () => {
      expect(rows(await fault.query("failed-pod-nodes"), ["namespace", "pod", "node"])).toEqual(
        failedPods.map((f) => `${f.namespace} ${f.pod.name} ${f.pod.node}`).sort(),
      );
    });

    it("finds the GPUs (index and UUID) each failed pod held", async () => {
      const names = new Set(failedPods.map((f) => f.pod.name));
      const held = (await fault.query("pod-gpus")).filter((s) => names.has(s.metric.pod as string));
      expect(rows(held, ["pod", "Hostname", "gpu", "UUID"])).toEqual(
        failedPods.flatMap((f) => f.pod.gpus.map((g) => `${f.pod.name} ${f.pod.node} ${g.index} ${g.uuid}`)).sort(),
      );
    });

    it("finds the XID that failed the workload on the GPU its pod held, while the XID is sticky", async () => {
      const ecc = failedPods.find(
        (f) =>
          f.cause.kind === "GpuFault" &&
          f.cause.xid === 95 &&
          f.pod.gpus.some((g) => f.cause.kind === "GpuFault" && g.uuid === f.cause.gpu.uuid),
      );
      if (ecc === undefined || ecc.cause.kind !== "GpuFault") throw new Error("the scenario no longer fails a pod with XID 95");
      const hit = (await fault.query("xid-pods")).filter((s) => s.metric.pod === ecc.pod.name);
      expect(hit.map((s) => [s.metric.UUID, s.metric.err_code, Number(s.value[1])])).toEqual([[ecc.cause.gpu.uuid, "95", 95]]);
    });

    it("finds the node whose GPU fell off the bus (XID 79) while it waits for its reboot, and not after", async () => {
      const offBus = fault.events.find((e) => e.kind === "GpuFault" && e.xid === 79);
      const reboot = fault.events.find((e) => e.kind === "NodeRebootStarted");
      const ready = fault.events.find((e) => e.kind === "NodeReady");
      if (offBus?.kind !== "GpuFault" || reboot === undefined || ready === undefined) throw new Error("the scenario changed");
      const during = await fault.query("missing-gpus", fault.scrapedBy(offBus.t + 5 * MINUTE));
      expect(during.map((s) => [s.metric.node, Number(s.value[1])])).toEqual([[offBus.node, 1]]);
      expect(await fault.query("missing-gpus", fault.scrapedBy(ready.t + 5 * MINUTE))).toEqual([]);
    });
  });

  describe("the same walk under the GPU Operator's ServiceMonitor (honorLabels: false)", () => {
    const failedPods = podsFailedIn(fault.events);
    const heldGpus = failedPods
      .flatMap((f) => f.pod.gpus.map((g) => `${f.namespace} ${f.pod.name} ${f.pod.node} ${g.index} ${g.uuid}`))
      .sort();
    const failedNames = new Set(failedPods.map((f) => f.pod.name));

    it("stores the exporter's pod as pod and the workload's as exported_pod, so the plain walk finds the exporter", async () => {
      const plain = await fault.queryUnderOperator("pod-gpus");
      expect(plain.length).toBeGreaterThan(0);
      for (const s of plain) expect(s.metric.pod).toMatch(/^nvidia-dcgm-exporter-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(new Set(plain.map((s) => s.metric.namespace))).toEqual(new Set(["gpu-operator"]));
    });

    it("finds the GPUs each failed pod held through exported_pod", async () => {
      const held = (await fault.queryUnderOperator("pod-gpus-exported")).filter((s) => failedNames.has(s.metric.exported_pod as string));
      expect(rows(held, ["exported_namespace", "exported_pod", "Hostname", "gpu", "UUID"])).toEqual(heldGpus);
    });

    it("joins them with kube-state-metrics' failed pods once exported_pod is renamed", async () => {
      expect(rows(await fault.queryUnderOperator("pod-gpus-joined-exported"), ["namespace", "pod", "Hostname", "gpu", "UUID"])).toEqual(
        heldGpus,
      );
    });

    it("finds the XID on the GPU the failed pod held, and the same answers as the walk without the operator", async () => {
      const under = await fault.queryUnderOperator("xid-pods-exported");
      const plain = await fault.query("xid-pods");
      const key = (s: InstantSample, pod: string, namespace: string) =>
        [s.metric[namespace], s.metric[pod], s.metric.Hostname, s.metric.gpu, s.metric.UUID, s.metric.err_code, s.value[1]].join(" ");
      expect(plain.length).toBeGreaterThan(0);
      expect(under.map((s) => key(s, "exported_pod", "exported_namespace")).sort()).toEqual(
        plain.map((s) => key(s, "pod", "namespace")).sort(),
      );
    });

    it("reads kube-state-metrics and the node steps alike in both setups", async () => {
      for (const id of ["failed-pods", "failed-pod-nodes", "missing-gpus"]) {
        const [plain, under] = [await fault.query(id), await fault.queryUnderOperator(id)];
        const labels = (s: InstantSample) => JSON.stringify(Object.entries(s.metric).sort());
        expect(under.map(labels).sort(), id).toEqual(plain.map(labels).sort());
      }
    });
  });

  describe("a job that keeps failing (crash-loop)", () => {
    it("finds its pod with the restarts the kubelet made, and none for jobs that never restarted", async () => {
      await expectRestartsFound(crashLoop.events, (id) => crashLoop.query(id));
    });

    it("sees it waiting in CrashLoopBackOff during its last back-off, and not once it has failed", async () => {
      const crashes = crashLoop.events.flatMap((e) => (e.kind === "ContainerCrashed" ? [e] : []));
      const lastCrash = crashes.at(-1) as (typeof crashes)[number];
      const during = await crashLoop.query("crash-looping-pods", crashLoop.scrapedBy(lastCrash.t + 10_000));
      expect(during.map((s) => s.metric.pod)).toEqual(lastCrash.pods.map((p) => p.name));
      expect(await crashLoop.query("crash-looping-pods")).toEqual([]);
    });
  });

  describe("a container killed at its memory limit (oom-kill)", () => {
    beforeAll(() => oom.run(), 60_000);
    afterAll(() => oom.stop());

    it("finds the OOM-killed container, and its working set against its limit, climbing to it", async () => {
      const killed = await oom.query("oom-killed-containers");
      expect(killed.map((s) => `${s.metric.pod} ${s.metric.container}`)).toEqual(["train-leaky-0-0 train-leaky"]);
      const ratios = await (oom.prometheus as PrometheusServer).queryRange(
        documentedQuery("memory-vs-limit"),
        oom.startWallMs,
        oom.scrapedBy(oom.durationMs),
        TICK_MS / 1000,
      );
      // Of the project's containers only the one with a limit (train-ok has none); system
      // containers with limits (KAI's, the GPU Operator's) have their own series.
      const project = ratios.filter((s) => s.metric.namespace === "runai-vision");
      expect(project.map((s) => s.metric.container)).toEqual(["train-leaky"]);
      const seen = (project[0]?.values ?? []).map((v) => Number(v[1]));
      expect(Math.min(...seen)).toBeGreaterThanOrEqual(0.2);
      // A scrape every 6 simulated minutes catches each 15-minute climb in its last 6 minutes: above 0.68.
      expect(Math.max(...seen)).toBeGreaterThan(0.6);
      expect(Math.max(...seen)).toBeLessThanOrEqual(1);
    });
  });

  describe("a slow-running job: one GPU under a lowered power limit (straggler)", () => {
    beforeAll(() => straggler.run(), 60_000);
    afterAll(() => straggler.stop());

    it("finds the one GPU that holds its job back, with its node, and no GPU before its limit dropped", async () => {
      const cap = straggler.events.find((e) => e.kind === "GpuPowerCap");
      const started = straggler.events.find((e) => e.kind === "WorkloadStarted");
      if (cap?.kind !== "GpuPowerCap" || started?.kind !== "WorkloadStarted") throw new Error("the scenario changed");
      const rank = started.pods.find((p) => p.gpus.some((g) => g.uuid === cap.gpu.uuid));
      const series = await (straggler.prometheus as PrometheusServer).queryRange(
        documentedQuery("straggler-gpus"),
        straggler.startWallMs,
        straggler.scrapedBy(straggler.durationMs),
        TICK_MS / 1000,
      );
      expect(series.map((s) => [s.metric.namespace, s.metric.pod, s.metric.Hostname, s.metric.gpu, s.metric.UUID])).toEqual([
        [started.workload.namespace, rank?.name, cap.node, String(cap.gpu.index), cap.gpu.uuid],
      ]);
      // Found only once the limit had dropped: not before the refresh that served it (Prometheus
      // stamps a sample with its scrape's start, which may precede that refresh by up to a tick
      // on a busy machine, while the state before it is a refresh, 6 simulated minutes, earlier).
      const firstSeen = Math.min(...(series[0]?.values ?? []).map((v) => v[0] * 1000));
      expect(firstSeen).toBeGreaterThanOrEqual(straggler.scrapedBy(cap.t) - 4 * TICK_MS);
      // Its power beside its peers': the lowest of the job's GPUs.
      const power = await straggler.query("job-gpu-power", firstSeen);
      const lowest = power.reduce((a, b) => (Number(a.value[1]) <= Number(b.value[1]) ? a : b));
      expect([lowest.metric.Hostname, lowest.metric.gpu]).toEqual([cap.node, String(cap.gpu.index)]);
    });
  });

  describe("a pod evicted under memory pressure (memory-pressure)", () => {
    it("finds the evicted pod and the node that was under pressure", async () => {
      await expectMemoryEvictionFound(memory.events, (id) => memory.query(id));
    });
  });

  describe("the slow-job journey (quota-exhaustion)", () => {
    it("sees the backlog's peak per project that the simulation had", async () => {
      const simulation = new Simulation(quota.blueprint);
      const peak = new Map<string, number>();
      for (let t = 0; t <= quota.durationMs; t += MINUTE) {
        simulation.runUntil(t);
        const pending = new Map<string, number>();
        for (const w of simulation.view().pending) pending.set(w.project, (pending.get(w.project) ?? 0) + w.pendingPods.length);
        for (const [project, pods] of pending) peak.set(project, Math.max(peak.get(project) ?? 0, pods));
      }
      expect([...peak.values()].some((pods) => pods >= 3)).toBe(true);

      const series = await (quota.prometheus as PrometheusServer).queryRange(
        documentedQuery("pending-per-project"),
        quota.startWallMs,
        quota.scrapedBy(quota.durationMs),
        TICK_MS / 1000,
      );
      const seen = new Map(series.map((s) => [s.metric.label_project as string, Math.max(...s.values.map((v) => Number(v[1])))]));
      expect(Object.fromEntries(seen)).toEqual(Object.fromEntries(peak));
    });

    it("shows why they wait: the pods the scheduler could not place at the peak", async () => {
      const waiting = quota.events.flatMap((e) => (e.kind === "WorkloadUnschedulable" ? [e] : []));
      const reasons = new Set(waiting.flatMap((e) => e.reasons.map((r) => r.reason)));
      expect([...reasons].sort()).toEqual(["NonPreemptibleOverQuota", "OverLimit"]);
      const at = quota.scrapedBy(90 * MINUTE);
      const unschedulable = await quota.query("unschedulable-pods", at);
      // On a busy machine the scrape the query reads may have seen a later frame than 90 minutes':
      // the truth is the frame that scrape of kube-state-metrics saw.
      const [scraped] = await (quota.prometheus as PrometheusServer).query('max(timestamp(kube_node_info{job="kube-state-metrics"}))', at);
      const simulation = new Simulation(quota.blueprint);
      simulation.runUntil(scraped === undefined ? 90 * MINUTE : quota.simulatedAt(Number(scraped.value[1]) * 1000));
      const pendingPods = simulation.view().pending.reduce((n, w) => n + w.pendingPods.length, 0);
      expect(unschedulable.reduce((n, s) => n + Number(s.value[1]), 0)).toBe(pendingPods);
    });
  });

  describe("the preemption storm", () => {
    it("lists exactly the evicted workloads, per action, with their evicted pods", async () => {
      const evicted = new Map<string, number>();
      for (const e of storm.events) {
        if (e.kind !== "WorkloadPreempted") continue;
        const key = `${e.workload.namespace} ${podGroupName(e.workload)} ${e.action}`;
        evicted.set(key, (evicted.get(key) ?? 0) + e.pods.length);
      }
      expect(new Set([...evicted.keys()].map((k) => k.split(" ")[2]))).toEqual(new Set(["reclaim", "preempt"]));
      const found = await storm.query("evicted-workloads");
      expect(
        Object.fromEntries(found.map((s) => [`${s.metric.namespace} ${s.metric.podgroup} ${s.metric.action}`, Number(s.value[1])])),
      ).toEqual(Object.fromEntries(evicted));
    });

    it("answers every documented query without error on each scenario", async () => {
      for (const scenario of scenarios) for (const id of documented.keys()) await scenario.query(id);
    });
  });
});
