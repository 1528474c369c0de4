/**
 * The failure journeys end to end: the queries of docs/queries.md, sent to a real Prometheus's
 * HTTP API, must answer what the simulation says happened — the failed workloads' pods, nodes,
 * GPUs and XIDs, the backlog's peak, the evicted workloads.
 *
 * Most scenarios run on simulated time: an offline run pushes its OTLP, stamped on the
 * blueprint's calendar, through gpusynth's own delivery (the SDK's HTTP transport, protobuf,
 * stale series flagged as the collector's prometheus receiver flags them) into Prometheus 3's OTLP
 * receiver, and each question is asked at the simulated instant it is about — no wall clock, no
 * slack for a busy machine. One scenario, gpu-fault, runs live and accelerated while two real
 * Prometheus servers scrape it through service discovery, plainly and as the GPU Operator's
 * ServiceMonitor does: the scrape path and its relabelling are what that walk is about.
 *
 * Ground truth comes from a second, in-process run of the same blueprint (runs are
 * deterministic), never from the telemetry itself.
 */
import { fileURLToPath } from "node:url";
import { type Blueprint, loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, type TargetSamples } from "@gpusynth/constructs";
import { type DomainEvent, podGroupName, Simulation, simulatedMs } from "@gpusynth/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtTool } from "../../cli/test/built-tools.js";
import { runLive } from "../src/live.js";
import { ScrapeServer, SD_PATH } from "../src/scrape-server.js";
import { documented, documentedQuery, expectMemoryEvictionFound, expectRestartsFound, podsFailedIn, rows } from "./journey-answers.js";
import { type InstantSample, PrometheusServer, prometheusBinary } from "./prometheus-server.js";
import { PushedScenario } from "./pushed-scenario.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Simulated seconds per wall second, by default: 12 simulated minutes pass every second. */
const SPEED = 720;
/** Wall-clock interval of gpusynth's refresh and of Prometheus' scrapes. */
const TICK_MS = 500;

const prometheus3 = builtTool("prometheus3");
/**
 * A scenario running live, scraped through service discovery by two Prometheus servers (plainly,
 * and as the GPU Operator's ServiceMonitor does), with the wall-clock time of each tick.
 */
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
    this.operatorPrometheus = await PrometheusServer.startWithScrapeConfigs(
      repo("deploy/prometheus/kube-prometheus.yml"),
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
      speed: SPEED,
      // The scenario's story from its start, for its simulated duration.
      warmupMs: 0,
      intervalMs: TICK_MS,
      durationMs: this.durationMs / SPEED,
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

  query(id: string, atMs?: number): Promise<InstantSample[]> {
    return (this.prometheus as PrometheusServer).query(documentedQuery(id), atMs);
  }

  /** A documented query sent to the Prometheus that scrapes as the ServiceMonitors do (deploy/prometheus/kube-prometheus.yml). */
  queryUnderOperator(id: string, atMs?: number): Promise<InstantSample[]> {
    return this.promqlUnderOperator(documentedQuery(id), atMs);
  }

  /** Any PromQL, sent to the Prometheus that scrapes as the ServiceMonitors do. */
  promqlUnderOperator(promql: string, atMs?: number): Promise<InstantSample[]> {
    return (this.operatorPrometheus as PrometheusServer).query(promql, atMs);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.operatorPrometheus?.stop();
    await this.prometheus?.stop();
    await this.server.close();
  }
}

describe.skipIf(prometheusBinary === "" || prometheus3 === "")("failure journeys on a real Prometheus", () => {
  // Scraped twice: as docs/queries.md's walk reads it, and as the GPU Operator's ServiceMonitor does.
  const fault = new LiveScenario("blueprints/scenarios/gpu-fault.yaml", 4 * HOUR);
  // Every 5 simulated minutes, as the live journeys at ×720 were scraped: what they check lasts
  // (the backlog's peak is compared with the truth at the same instants).
  const quota = new PushedScenario("blueprints/scenarios/quota-exhaustion.yaml", 150 * MINUTE, 5 * MINUTE);
  const storm = new PushedScenario("blueprints/scenarios/preemption-storm.yaml", 2 * HOUR, 5 * MINUTE);
  const crashLoop = new PushedScenario("blueprints/scenarios/crash-loop.yaml", 45 * MINUTE);
  const memory = new PushedScenario("blueprints/scenarios/memory-pressure.yaml", 35 * MINUTE);
  const oom = new PushedScenario("blueprints/scenarios/oom-kill.yaml", 70 * MINUTE);
  const straggler = new PushedScenario("blueprints/scenarios/straggler.yaml", HOUR);
  // Its checks read the state once both jobs run (the starved one from 00:05): half an hour holds it.
  const starved = new PushedScenario("blueprints/scenarios/data-starved.yaml", 30 * MINUTE);
  const pushed = [quota, storm, crashLoop, memory, oom, straggler, starved];
  const stores: PrometheusServer[] = [];

  beforeAll(async () => {
    // Each pushed scenario into its own Prometheus 3's OTLP receiver. The live run paces itself
    // on the wall clock; the pushed ones compute between its ticks.
    const push = async (scenario: PushedScenario) => {
      const store = await PrometheusServer.startOtlpReceiver(prometheus3);
      stores.push(store);
      await scenario.run(`${store.api}/api/v1/otlp/v1/metrics`, store);
    };
    await Promise.all([fault.run(), ...pushed.map(push)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([fault.stop(), ...stores.map((store) => store.stop())]);
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

  describe("kube-prometheus' selectors on the kubelet's cAdvisor endpoint and node-exporter (its ServiceMonitors)", () => {
    // kube-prometheus v0.18.0 configures kubernetes-mixin (jsonnet/kube-prometheus/components/
    // k8s-control-plane.libsonnet @4775d44d) with these selectors.
    const cadvisor = 'job="kubelet", metrics_path="/metrics/cadvisor"';
    const nodes = ["train-node-0", "train-node-1"];
    // 02:50, before node 0 reboots: both nodes up, the 4-GPU job running on node 0.
    const at = () => fault.scrapedBy(170 * MINUTE);

    it("selects every running container's cAdvisor series, labelled with the node kube-state-metrics places its pod on", async () => {
      const containers = await fault.promqlUnderOperator(`container_cpu_usage_seconds_total{${cadvisor}, image!=""}`, at());
      expect(new Set(containers.map((s) => s.metric.node))).toEqual(new Set(nodes));
      const misplaced = await fault.promqlUnderOperator(
        `container_cpu_usage_seconds_total{${cadvisor}, image!=""} unless on (namespace, pod, node) kube_pod_info{job="kube-state-metrics"}`,
        at(),
      );
      expect(containers.length).toBeGreaterThan(nodes.length);
      expect(misplaced).toEqual([]);
    });

    it("answers kube-prometheus' node:node_num_cpu:sum, which joins node-exporter's pods with kube_pod_info: 224 CPUs a DGX H100", async () => {
      // kubernetes-mixin rules/node.libsonnet (@df91a9b0, the commit kube-prometheus v0.18.0 pins):
      // node:node_num_cpu:sum over node_namespace_pod:kube_pod_info:, the cluster label left empty.
      const podNodes =
        'topk by (cluster, namespace, pod) (1, max by (cluster, node, namespace, pod) (label_replace(kube_pod_info{job="kube-state-metrics",node!=""}, "pod", "$1", "pod", "(.*)")))';
      const cpus = await fault.promqlUnderOperator(
        `count by (cluster, node) (node_cpu_seconds_total{mode="idle",job="node-exporter"} * on (cluster, namespace, pod) group_left(node) topk by (cluster, namespace, pod) (1, ${podNodes}))`,
        at(),
      );
      expect(rows(cpus, ["node"])).toEqual(nodes);
      for (const s of cpus) expect(s.value[1]).toBe("224");
      // node-exporter's instance is the node's name, as its ServiceMonitor relabels it.
      const instances = await fault.promqlUnderOperator('count by (instance) (node_boot_time_seconds{job="node-exporter"})', at());
      expect(rows(instances, ["instance"])).toEqual(nodes);
    });

    it("finds every kubelet up on its /metrics endpoint, so kube-prometheus' KubeletDown stays quiet, and its pods counted", async () => {
      // KubeletDown (kubernetes-mixin, as kube-prometheus v0.18.0 renders it): kube_node_info
      // unless an up{job="kubelet", metrics_path="/metrics"} == 1.
      const down = await fault.promqlUnderOperator(
        'count by (cluster) (kube_node_info{job="kube-state-metrics"}) unless on (cluster) count by (cluster) (up{job="kubelet", metrics_path="/metrics"} == 1)',
        at(),
      );
      expect(down).toEqual([]);
      const up = await fault.promqlUnderOperator('up{job="kubelet", metrics_path="/metrics"} == 1', at());
      expect(rows(up, ["node"])).toEqual(nodes);
      // The kubelet's pods and kube-state-metrics' agree: every pod placed on the node and running.
      const pods = await fault.promqlUnderOperator('kubelet_running_pods{job="kubelet", metrics_path="/metrics"}', at());
      const listed = await fault.promqlUnderOperator(
        'count by (node) (kube_pod_info{job="kube-state-metrics"} * on (namespace, pod) group_left () (kube_pod_status_phase{phase="Running"} == 1))',
        at(),
      );
      expect(pods.map((s) => [s.metric.node, s.value[1]]).sort()).toEqual(listed.map((s) => [s.metric.node, s.value[1]]).sort());
    });
  });

  describe("a job whose data loader is held at its CPU limit (data-starved)", () => {
    it("finds its pod at its CPU limit and its node far from busy: the limit holds the loader back, not the node", async () => {
      // Every pod with a CPU limit (the system's too): only the starved loader's sits at it.
      const atLimit = await starved.query("cpu-vs-limit");
      expect(rows(atLimit, ["pod"])).toContain("train-starved-0-0");
      expect(atLimit.filter((s) => Number(s.value[1]) > 0.5).map((s) => s.metric.pod)).toEqual(["train-starved-0-0"]);
      expect(Number(atLimit.find((s) => s.metric.pod === "train-starved-0-0")?.value[1])).toBeCloseTo(1, 2);
      const node = await starved.query("node-cpu-utilisation");
      expect(node).toHaveLength(1);
      // Its 16 cores and the fed job's, of the node's 256.
      expect(Number(node[0]?.value[1])).toBeGreaterThan(0.05);
      expect(Number(node[0]?.value[1])).toBeLessThan(0.25);
    });
  });

  describe("a job that keeps failing (crash-loop)", () => {
    it("finds its pod with the restarts the kubelet made, and none for jobs that never restarted", async () => {
      await expectRestartsFound(crashLoop.events, (id) => crashLoop.query(id));
    });

    it("sees it waiting in CrashLoopBackOff during its last back-off, and not once it has failed", async () => {
      const crashes = crashLoop.events.flatMap((e) => (e.kind === "ContainerCrashed" ? [e] : []));
      const lastCrash = crashes.at(-1) as (typeof crashes)[number];
      const failed = crashLoop.events.find((e) => e.kind === "WorkloadFailed" && e.workload.name === lastCrash.workload.name);
      if (failed === undefined) throw new Error("the scenario no longer fails its crash-looping job");
      const during = await crashLoop.query("crash-looping-pods", crashLoop.scrapeAfter(lastCrash.t + 1));
      expect(during.map((s) => s.metric.pod)).toEqual(lastCrash.pods.map((p) => p.name));
      // Its series ends with the first scrape after the failure (a stale marker), not 5 minutes later.
      expect(await crashLoop.query("crash-looping-pods", crashLoop.scrapeAfter(failed.t))).toEqual([]);
    });
  });

  describe("a container killed at its memory limit (oom-kill)", () => {
    it("finds the OOM-killed container, and its working set against its limit, climbing to it", async () => {
      const killed = await oom.query("oom-killed-containers");
      expect(killed.map((s) => `${s.metric.pod} ${s.metric.container}`)).toEqual(["train-leaky-0-0 train-leaky"]);
      const ratios = await oom.queryRange("memory-vs-limit");
      // Of the project's containers only the one with a limit (train-ok has none); system
      // containers with limits (KAI's, the GPU Operator's) have their own series.
      const project = ratios.filter((s) => s.metric.namespace === "runai-vision");
      expect(project.map((s) => s.metric.container)).toEqual(["train-leaky"]);
      const seen = (project[0]?.values ?? []).map((v) => Number(v[1]));
      expect(Math.min(...seen)).toBeGreaterThanOrEqual(0.2);
      // Each climb to the limit takes 15 minutes: a scrape every minute sees it within 7 % of the limit.
      expect(Math.max(...seen)).toBeGreaterThan(0.93);
      expect(Math.max(...seen)).toBeLessThanOrEqual(1);
    });
  });

  describe("a slow-running job: one GPU under a lowered power limit (straggler)", () => {
    it("finds the one GPU that holds its job back, with its node, and no GPU before its limit dropped", async () => {
      const cap = straggler.events.find((e) => e.kind === "GpuPowerCap");
      const started = straggler.events.find((e) => e.kind === "WorkloadStarted");
      if (cap?.kind !== "GpuPowerCap" || started?.kind !== "WorkloadStarted") throw new Error("the scenario changed");
      const rank = started.pods.find((p) => p.gpus.some((g) => g.uuid === cap.gpu.uuid));
      // From when every rank runs: a rank whose container starts a scrape after the others' shows
      // its GPUs slower for that scrape, as a real job's would.
      const series = await straggler.queryRange("straggler-gpus", 2 * MINUTE);
      expect(series.map((s) => [s.metric.namespace, s.metric.pod, s.metric.Hostname, s.metric.gpu, s.metric.UUID])).toEqual([
        [started.workload.namespace, rank?.name, cap.node, String(cap.gpu.index), cap.gpu.uuid],
      ]);
      // Found from the first scrape after its limit dropped, and not before.
      const firstSeen = Math.min(...(series[0]?.values ?? []).map((v) => v[0] * 1000));
      expect(firstSeen).toBeGreaterThanOrEqual(straggler.stamp(cap.t));
      expect(firstSeen).toBe(straggler.stamp(straggler.scrapeAfter(cap.t)));
      // Its power beside its peers': the lowest of the job's GPUs.
      const power = await straggler.query("job-gpu-power", firstSeen - straggler.stamp(0));
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
      // The truth at every scrape's instant.
      const simulation = new Simulation(quota.blueprint);
      const peak = new Map<string, number>();
      for (let t = 0; t <= quota.durationMs; t += quota.intervalMs) {
        simulation.runUntil(t);
        const pending = new Map<string, number>();
        for (const w of simulation.view().pending) pending.set(w.project, (pending.get(w.project) ?? 0) + w.pendingPods.length);
        for (const [project, pods] of pending) peak.set(project, Math.max(peak.get(project) ?? 0, pods));
      }
      expect([...peak.values()].some((pods) => pods >= 3)).toBe(true);

      const series = await quota.queryRange("pending-per-project");
      const seen = new Map(series.map((s) => [s.metric.label_project as string, Math.max(...s.values.map((v) => Number(v[1])))]));
      expect(Object.fromEntries(seen)).toEqual(Object.fromEntries(peak));
    });

    it("shows why they wait: the pods the scheduler could not place at the peak", async () => {
      const waiting = quota.events.flatMap((e) => (e.kind === "WorkloadUnschedulable" ? [e] : []));
      const reasons = new Set(waiting.flatMap((e) => e.reasons.map((r) => r.reason)));
      expect([...reasons].sort()).toEqual(["NonPreemptibleOverQuota", "OverLimit"]);
      const unschedulable = await quota.query("unschedulable-pods", 90 * MINUTE);
      const simulation = new Simulation(quota.blueprint);
      simulation.runUntil(90 * MINUTE);
      const pendingPods = simulation.view().pending.reduce((n, w) => n + w.pendingPods.length, 0);
      expect(pendingPods).toBeGreaterThan(0);
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
      for (const scenario of [fault, ...pushed]) for (const id of documented.keys()) await scenario.query(id);
    });
  });
});
