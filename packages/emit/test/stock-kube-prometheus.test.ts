/**
 * kube-prometheus v0.18.0's own rules and alerts — the Kubernetes mixin's, kube-state-metrics',
 * node-exporter's and kube-prometheus' PrometheusRules as the release renders them
 * (`manifests/*-prometheusRule.yaml`, fetched by scripts/build-tools.sh kube-prometheus) — asked
 * of runs pushed into a real Prometheus 3, at the simulated instants they cover (kube-prometheus.ts).
 *
 * Every run's exporters are scraped through kube-prometheus' ServiceMonitors (a blueprint's
 * `telemetry.serviceMonitors`), whose labels the Kubernetes mixin selects on. A calm lab: the
 * recording rules answer exactly where every series they read exists, and the only alerts that
 * fire are the ones docs/kubernetes.md tells a user to turn off because gpusynth emulates no
 * control plane (and Watchdog, which always fires). The scenarios: an alert fires where its
 * situation lasts its real `for:`, for the pod or node it is about, and stays pending where the
 * situation is shorter.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Blueprint } from "@gpusynth/blueprint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSignals } from "../../cli/src/signals-doc.js";
import { builtTool } from "../../cli/test/built-tools.js";
import {
  durationSeconds,
  type FiredAlert,
  firedAlerts,
  inliner,
  kubePrometheusDashboards,
  kubePrometheusRules,
  openDashboard,
  type Rule,
  substitute,
} from "./kube-prometheus.js";

import { PrometheusServer } from "./prometheus-server.js";
import { PushedScenario } from "./pushed-scenario.js";

const MINUTE = 60_000;
const prometheus3 = builtTool("prometheus3");
const kubePrometheus = builtTool("kube-prometheus");

/** The alerts docs/kubernetes.md tells a kube-prometheus-stack user to disable (`defaultRules.disabled`). */
function documentedDisabledAlerts(): string[] {
  const doc = readFileSync(fileURLToPath(new URL("../../../docs/kubernetes.md", import.meta.url)), "utf8");
  const block = doc.match(/defaultRules:\n {2}disabled:\n((?: {4}\w+: true\n)+)/)?.[1];
  if (block === undefined) throw new Error("docs/kubernetes.md no longer lists defaultRules.disabled");
  return [...block.matchAll(/(\w+): true/g)].map(([, name]) => name as string);
}

interface AstNode {
  readonly type?: string;
  readonly name?: string;
  readonly matchers?: ReadonlyArray<{ name: string; type: string; value: string }>;
}

/** Every series selector in a parsed PromQL expression (Prometheus' own parser: /api/v1/parse_query). */
function selectorsOf(node: unknown, found = new Set<string>()): Set<string> {
  if (node === null || typeof node !== "object") return found;
  const { type, name, matchers } = node as AstNode;
  if (type === "vectorSelector" || type === "matrixSelector") {
    const labels = (matchers ?? []).filter((m) => m.name !== "__name__").map((m) => `${m.name}${m.type}${JSON.stringify(m.value)}`);
    found.add(`${name ?? ""}{${labels.join(", ")}}`);
  }
  for (const child of Object.values(node)) selectorsOf(child, found);
  return found;
}

/**
 * A store's series at `atMs`, as the checks ask about them: the selectors of an expression
 * (Prometheus' own parser), and whether a selector finds any series — each selector asked once, as
 * rules and panels share most of theirs.
 */
function seriesAt(store: PrometheusServer, atMs: number) {
  const found = new Map<string, Promise<boolean>>();
  return {
    selectorsIn: async (expr: string) => selectorsOf(await store.get(`/api/v1/parse_query?query=${encodeURIComponent(expr)}`)),
    finds: (selector: string): Promise<boolean> => {
      let answer = found.get(selector);
      if (answer === undefined) {
        answer = store.query(`count(${selector})`, atMs).then((result) => result.length > 0);
        found.set(selector, answer);
      }
      return answer;
    },
  };
}

/**
 * A scenario pushed into its own Prometheus 3 (scenarios share calendar days), its exporters
 * scraped through kube-prometheus' ServiceMonitors (`telemetry.serviceMonitors`), whose labels
 * the Kubernetes mixin selects on.
 */
async function pushed(file: string, durationMs: number, intervalMs?: number, telemetry: Partial<Blueprint["telemetry"]> = {}) {
  const scenario = new PushedScenario(file, durationMs, intervalMs, { serviceMonitors: true, ...telemetry });
  const store = await PrometheusServer.startOtlpReceiver(prometheus3);
  await scenario.run(`${store.api}/api/v1/otlp/v1/metrics`, store);
  return { scenario, store };
}

/** The alerts (those named `only`, where given) that fired over a whole scenario, one rule evaluation per scrape. */
function firedOver(scenario: PushedScenario, store: PrometheusServer, rules: readonly Rule[], only?: string): Promise<FiredAlert[]> {
  return firedAlerts(store, rules, scenario.stamp(0), scenario.stamp(scenario.lastScrape), scenario.intervalMs / 1000, only);
}

/**
 * kube-prometheus' dashboards on what gpusynth emulates, and how many panels of each answer on
 * data-starved (docs/kubernetes.md). The rest read cAdvisor's network and filesystem series,
 * node-exporter's disks, filesystems, network and info series, and the kubelet's own /metrics,
 * which gpusynth does not emit (cantfind.md `kubelet.cadvisor-sets`, `node-exporter.collectors`).
 */
const DASHBOARDS = [
  "k8s-resources-cluster.json",
  "k8s-resources-namespace.json",
  "k8s-resources-node.json",
  "k8s-resources-nodes-overview.json",
  "k8s-resources-pod.json",
  "k8s-resources-workload.json",
  "k8s-resources-workloads-namespace.json",
  "cluster-total.json",
  "namespace-by-pod.json",
  "namespace-by-workload.json",
  "pod-total.json",
  "workload-total.json",
  "kubelet.json",
  "node-rsrc-use.json",
  "node-cluster-rsrc-use.json",
  "nodes.json",
  "persistentvolumesusage.json",
];
/** Panels per dashboard that answer: every one but those reading what NOT_EMULATED lists. */
const ANSWERED = [
  "k8s-resources-cluster.json 10/22",
  "k8s-resources-namespace.json 7/18",
  "k8s-resources-node.json 5/5",
  "k8s-resources-nodes-overview.json 5/5",
  "k8s-resources-pod.json 5/16",
  "k8s-resources-workload.json 4/13",
  "k8s-resources-workloads-namespace.json 4/13",
  "cluster-total.json 0/13",
  "namespace-by-pod.json 0/9",
  "namespace-by-workload.json 0/11",
  "pod-total.json 0/8",
  "workload-total.json 0/10",
  "kubelet.json 3/24",
  "node-rsrc-use.json 0/9",
  "node-cluster-rsrc-use.json 4/9",
  "nodes.json 0/8",
  "persistentvolumesusage.json 0/4",
];
/** What the dashboards read and gpusynth does not emit, each with its reason. */
const NOT_EMULATED = [
  // cAdvisor's network and filesystem sets (cantfind.md kubelet.cadvisor-sets).
  /^container_(network|fs)_/,
  // node-exporter's disk, filesystem, network and netstat collectors, and its info series the
  // instance lists are built on (cantfind.md node-exporter.collectors).
  /^node_(disk|filesystem|network|netstat)_/,
  /^(node_uname_info|node_exporter_build_info)$/,
  // The kubelet's own /metrics, volumes included (signals/kubelet.md; docs/kubernetes.md).
  /^(kubelet_|volume_manager_|storage_operation_|rest_client_|process_|go_)/,
  // Kubernetes Jobs: Run:ai's workloads are not batch/v1 Jobs, so kube-state-metrics lists none.
  /^kube_job_owner$/,
];
/** Panels that read emitted families and show nothing because the cluster holds none of it: Run:ai sets no memory limit by default. */
const EMPTY_BY_DESIGN = ["k8s-resources-namespace.json: Memory Utilisation (from limits)"];

const minutesInto = (scenario: PushedScenario, unixSeconds: number) => (unixSeconds * 1000 - scenario.stamp(0)) / MINUTE;

describe.skipIf(prometheus3 === "" || kubePrometheus === "")("kube-prometheus v0.18.0's rules and alerts on gpusynth's runs", () => {
  const rules = kubePrometheus === "" ? [] : kubePrometheusRules(kubePrometheus);
  const inline = inliner(rules);
  const stores: PrometheusServer[] = [];
  afterAll(async () => Promise.all(stores.map((s) => s.stop())));

  describe("a calm lab, 30 minutes scraped every minute", () => {
    let lab: PushedScenario;
    let store: PrometheusServer;
    /** Each rule's series selectors that find nothing at the lab's last scrape. */
    const missing = new Map<Rule, string[]>();

    beforeAll(async () => {
      ({ scenario: lab, store } = await pushed("blueprints/lab.yaml", 30 * MINUTE));
      stores.push(store);
      const { selectorsIn, finds } = seriesAt(store, lab.stamp(lab.lastScrape));
      for (const rule of rules) {
        const absent: string[] = [];
        for (const selector of await selectorsIn(inline(rule.expr))) if (!(await finds(selector))) absent.push(selector);
        missing.set(rule, absent);
      }
    }, 120_000);

    it("answers a recording rule exactly where every series it reads is there: kube-state-metrics', cAdvisor's and node-exporter's", async () => {
      const answered = new Map<string, number>();
      for (const rule of rules.filter((r) => r.record !== undefined)) {
        const result = await store.query(inline(rule.expr), lab.stamp(lab.lastScrape));
        // count:up0 counts the targets that did not answer: none does not.
        if (rule.record !== "count:up0") expect(result.length > 0, rule.record).toBe(missing.get(rule)?.length === 0);
        if (result.length > 0) answered.set(rule.record as string, Math.max(answered.get(rule.record as string) ?? 0, result.length));
      }
      const nodes = lab.blueprint.nodePools.reduce((sum, pool) => sum + pool.nodes, 0);
      expect([...answered.keys()].sort()).toEqual([
        ":node_memory_MemAvailable_bytes:sum",
        "cluster:namespace:pod_cpu:active:kube_pod_container_resource_limits",
        "cluster:namespace:pod_cpu:active:kube_pod_container_resource_requests",
        "cluster:namespace:pod_memory:active:kube_pod_container_resource_limits",
        "cluster:namespace:pod_memory:active:kube_pod_container_resource_requests",
        "cluster:node_cpu:ratio",
        "cluster:node_cpu:ratio_rate5m",
        "cluster:node_cpu:sum_rate5m",
        "count:up1",
        "instance:node_cpu:rate:sum",
        "instance:node_cpu:ratio",
        "instance:node_cpu_utilisation:rate5m",
        "instance:node_load1_per_cpu:ratio",
        "instance:node_memory_utilisation:ratio",
        "instance:node_num_cpu:sum",
        "instance:node_vmstat_pgmajfault:rate5m",
        "namespace_cpu:kube_pod_container_resource_limits:sum",
        "namespace_cpu:kube_pod_container_resource_requests:sum",
        "namespace_memory:kube_pod_container_resource_limits:sum",
        "namespace_memory:kube_pod_container_resource_requests:sum",
        "namespace_workload_pod:kube_pod_owner:relabel",
        "node:node_cpu_utilization:ratio_rate5m",
        "node:node_num_cpu:sum",
        "node_namespace_pod:kube_pod_info:",
        "node_namespace_pod_container:container_cpu_usage_seconds_total:sum_irate",
        "node_namespace_pod_container:container_cpu_usage_seconds_total:sum_rate5m",
        "node_namespace_pod_container:container_memory_cache",
        "node_namespace_pod_container:container_memory_rss",
        "node_namespace_pod_container:container_memory_swap",
        "node_namespace_pod_container:container_memory_working_set_bytes",
      ]);
      for (const perNode of ["instance:node_num_cpu:sum", "instance:node_cpu_utilisation:rate5m", "instance:node_memory_utilisation:ratio"])
        expect(answered.get(perNode), perNode).toBe(nodes);
      // The lab's DGX A100 nodes: 128 cores with two threads each, by instance and, joined to
      // kube_pod_info through node-exporter's pod, by node.
      for (const record of ["instance:node_num_cpu:sum", "node:node_num_cpu:sum"]) {
        const cpus = await store.query(inline(record), lab.stamp(lab.lastScrape));
        expect(
          cpus.map((s) => Number(s.value[1])),
          record,
        ).toEqual(Array(nodes).fill(256));
      }
      for (const ratio of await store.query(
        inline("instance:node_cpu_utilisation:rate5m or instance:node_memory_utilisation:ratio"),
        lab.stamp(lab.lastScrape),
      )) {
        expect(Number(ratio.value[1])).toBeGreaterThan(0);
        expect(Number(ratio.value[1])).toBeLessThan(1);
      }
    });

    it("fires only Watchdog and the control plane's alerts that docs/kubernetes.md says to disable, each after its for:", async () => {
      const fired = await firedOver(lab, store, rules);
      // The chart's list names KubeProxyDown too, a rule of the chart's that kube-prometheus does not ship.
      const shipped = documentedDisabledAlerts().filter((name) => rules.some((r) => r.alert === name));
      expect([...new Set(fired.map((f) => f.alert.split(" ")[0]))].sort()).toEqual(["Watchdog", ...shipped].sort());
      for (const { alert, firingFrom } of fired) {
        const rule = rules.find((r) => alert.startsWith(`${r.alert} `)) as Rule;
        expect(minutesInto(lab, firingFrom), alert).toBeGreaterThanOrEqual(durationSeconds(rule.for) / 60);
      }
    });

    it("feeds the alerts on workloads, DaemonSets, Deployments, nodes and kube-state-metrics itself from real series", () => {
      const fed = rules
        .filter((r) => r.alert !== undefined && missing.get(r)?.length === 0)
        .map((r) => `${r.alert} (${r.labels?.severity})`);
      expect(fed).toEqual([
        "KubePodNotReady (warning)",
        "KubeDeploymentGenerationMismatch (warning)",
        "KubeDeploymentReplicasMismatch (warning)",
        "KubeDeploymentRolloutStuck (warning)",
        "KubeDaemonSetRolloutStuck (warning)",
        "KubeDaemonSetNotScheduled (warning)",
        "KubeDaemonSetMisScheduled (warning)",
        "KubeNodeNotReady (warning)",
        "KubeNodePressure (info)",
        "KubeletTooManyPods (info)",
        "KubeNodeReadinessFlapping (warning)",
        "KubeletInstanceUnreachable (warning)",
        "KubeletDown (critical)",
        "KubeStateMetricsShardingMismatch (critical)",
        "KubeStateMetricsShardsMissing (critical)",
        "NodeClockSkewDetected (warning)",
        "NodeClockNotSynchronising (warning)",
        "NodeCPUHighUsage (info)",
        "NodeSystemSaturation (warning)",
        "NodeMemoryMajorPagesFaults (warning)",
        "NodeMemoryHighUtilization (warning)",
        "TargetDown (warning)",
        "Watchdog (none)",
      ]);
    });
  });

  it("the lab with kube-state-metrics in 4 shards: every shard reports, all agree on the count, and the alerts that fire are the calm lab's", async () => {
    const { scenario, store } = await pushed("blueprints/lab.yaml", 30 * MINUTE, undefined, { kubeStateMetrics: { shards: 4 } });
    stores.push(store);
    const at = scenario.stamp(scenario.lastScrape);
    const ordinals = await store.query('kube_state_metrics_shard_ordinal{job="kube-state-metrics"}', at);
    expect(ordinals.map((s) => [s.metric.shard_ordinal, Number(s.value[1])]).sort()).toEqual([0, 1, 2, 3].map((i) => [String(i), i]));
    expect((await store.query("kube_state_metrics_total_shards", at)).map((s) => Number(s.value[1]))).toEqual([4, 4, 4, 4]);
    // The same alerts as one instance's lab: KubeStateMetricsShardsMissing and ShardingMismatch stay quiet…
    const shipped = documentedDisabledAlerts().filter((name) => rules.some((r) => r.alert === name));
    const fired = await firedOver(scenario, store, rules);
    expect([...new Set(fired.map((f) => f.alert.split(" ")[0]))].sort()).toEqual(["Watchdog", ...shipped].sort());
    // …and would not, were a shard missing: the rule's own expression, shard 2 left out.
    const missingShard = rules.find((r) => r.alert === "KubeStateMetricsShardsMissing") as Rule;
    const withoutTwo = missingShard.expr.replace(
      'kube_state_metrics_shard_ordinal{job="kube-state-metrics"}',
      'kube_state_metrics_shard_ordinal{job="kube-state-metrics",shard_ordinal!="2"}',
    );
    expect(withoutTwo).not.toBe(missingShard.expr);
    expect(await store.query(inline(withoutTwo), at)).toHaveLength(1);
    // The Kubernetes mixin's workload relabelling finds the shards' pods as one StatefulSet's.
    const relabel = rules.find(
      (r) => r.record === "namespace_workload_pod:kube_pod_owner:relabel" && r.labels?.workload_type === "statefulset",
    ) as Rule;
    const statefulSets = await store.query(inline(relabel.expr), at);
    expect(statefulSets.map((s) => [s.metric.namespace, s.metric.workload, s.metric.pod]).sort()).toEqual(
      [0, 1, 2, 3].map((i) => ["kube-system", "kube-state-metrics", `kube-state-metrics-${i}`]),
    );
  }, 120_000);

  it("crash-loop: KubePodCrashLooping fires for the crash-looping pod alone, 15 minutes after its first back-off", async () => {
    const { scenario, store } = await pushed("blueprints/scenarios/crash-loop.yaml", 40 * MINUTE);
    stores.push(store);
    const crashes = scenario.events.flatMap((e) => (e.kind === "ContainerCrashed" ? [e] : []));
    const firstCrash = crashes[0] as (typeof crashes)[number];
    const failed = scenario.events.find((e) => e.kind === "WorkloadFailed" && e.workload.name === firstCrash.workload.name);
    const looping = (await firedOver(scenario, store, rules, "KubePodCrashLooping")).filter(
      (f) => f.alert === "KubePodCrashLooping (warning)",
    );
    expect(looping.map((f) => f.labels.pod)).toEqual(firstCrash.pods.map((p) => p.name));
    const from = minutesInto(scenario, (looping[0] as FiredAlert).firingFrom);
    // Not before the back-off has lasted its for: (15m), and while the pod still loops.
    expect(from).toBeGreaterThanOrEqual(firstCrash.t / MINUTE + 15);
    expect(from).toBeLessThanOrEqual((failed?.t ?? Number.POSITIVE_INFINITY) / MINUTE + 5);
  }, 60_000);

  describe("data-starved, the slow-job journey: a data loader held at its CPU limit, 30 minutes", () => {
    let scenario: PushedScenario;
    let store: PrometheusServer;
    beforeAll(async () => {
      ({ scenario, store } = await pushed("blueprints/scenarios/data-starved.yaml", 30 * MINUTE));
      stores.push(store);
    }, 120_000);

    it("fires CPUThrottlingHigh for the data loader alone, once it has been throttled 15 minutes", async () => {
      const throttled = (await firedOver(scenario, store, rules, "CPUThrottlingHigh")).filter(
        (f) => f.alert === "CPUThrottlingHigh (info)",
      );
      expect(throttled.map((f) => `${f.labels.namespace}/${f.labels.pod} ${f.labels.container}`)).toEqual([
        "runai-vision/train-starved-0-0 train-starved",
      ]);
      const started = scenario.events.find((e) => e.kind === "WorkloadStarted" && e.workload.name === "train-starved");
      if (started === undefined) throw new Error("the scenario no longer starts train-starved");
      // Its expression reads 5 minutes of CFS periods; the alert then waits out its for: (15m).
      expect(minutesInto(scenario, (throttled[0] as FiredAlert).firingFrom)).toBeGreaterThanOrEqual(started.t / MINUTE + 15);
    });

    it("shows the starved pod on k8s-resources-pod at its CPU limit, throttled in nearly every CFS period", async () => {
      const at = scenario.stamp(scenario.lastScrape);
      const [board] = kubePrometheusDashboards(kubePrometheus, ["k8s-resources-pod.json"]);
      if (board === undefined) throw new Error("no k8s-resources-pod dashboard");
      const [pod] = await store.query('kube_pod_info{pod="train-starved-0-0"}', at);
      const values = await openDashboard(store, board, at, {
        builtins: { __rate_interval: "4m", __interval: "1m", __range: "30m" },
        inline,
        chosen: { namespace: pod?.metric.namespace ?? "", pod: "train-starved-0-0" },
      });
      const panel = async (title: string) => {
        const found = board.panels.find((p) => p.title === title);
        if (found === undefined) throw new Error(`k8s-resources-pod has no panel "${title}"`);
        return store.query(inline(substitute(found.exprs[0] as string, values)), at);
      };
      // The loader's limit: 4 cores per GPU, 4 GPUs (the scenario's header).
      const usage = await panel("CPU Usage");
      expect(usage.map((s) => s.metric.container)).toEqual(["train-starved"]);
      expect(Number(usage[0]?.value[1])).toBeCloseTo(16, 0);
      const throttling = await panel("CPU Throttling");
      expect(throttling.map((s) => s.metric.container)).toEqual(["train-starved"]);
      expect(Number(throttling[0]?.value[1])).toBeGreaterThan(0.9);
    });

    it("answers every panel of the compute and node dashboards whose series gpusynth emits, opened on the starved pod", async () => {
      const at = scenario.stamp(scenario.lastScrape);
      // As a user opens them from the starved pod: its namespace, pod and node.
      const [pod] = await store.query('kube_pod_info{pod="train-starved-0-0"}', at);
      const chosen = { namespace: pod?.metric.namespace ?? "", pod: "train-starved-0-0", node: pod?.metric.node ?? "" };
      // Grafana's own: $__rate_interval is four scrape intervals (a minute here).
      const builtins = { __rate_interval: "4m", __interval: "1m", __range: "30m" };
      const emitted = new Set(
        readSignals(fileURLToPath(new URL("../../../signals", import.meta.url)))
          .filter((f) => f.status !== "PENDING")
          .map((f) => f.name),
      );
      const answered: string[] = [];
      const lacking = new Set<string>();
      const familyOf = (selector: string) => selector.slice(0, selector.indexOf("{"));
      const { selectorsIn, finds } = seriesAt(store, at);
      for (const board of kubePrometheusDashboards(kubePrometheus, DASHBOARDS)) {
        const values = await openDashboard(store, board, at, { builtins, inline, chosen });
        // A variable with nothing to offer, and why: the families its query reads that gpusynth does
        // not emit (an instance list built on an info series), or an earlier variable left empty. A
        // single cluster's `cluster` is empty by design.
        const unset = new Map<string, string[]>();
        for (const variable of board.variables) {
          if (variable.type !== "query" || variable.name === "cluster" || values[variable.name] !== "") continue;
          const query = variable.query.replace(/^label_values\((.*),\s*\w+\)\s*$/s, "$1");
          unset.set(variable.name, [
            ...[...(await selectorsIn(inline(query.replace(/\$\w+/g, ""))))].map(familyOf).filter((name) => !emitted.has(name)),
            ...[...unset].filter(([name]) => query.includes(`$${name}`)).flatMap(([, causes]) => causes),
          ]);
        }
        let count = 0;
        for (const panel of board.panels) {
          const key = `${board.file}: ${panel.title}`;
          const exprs = panel.exprs.map((e) => inline(substitute(e, values)));
          const answers = (await Promise.all(exprs.map((e) => store.query(e, at)))).some((r) => r.length > 0);
          const absent = new Set<string>();
          for (const expr of exprs) for (const selector of await selectorsIn(expr)) if (!(await finds(selector))) absent.add(selector);
          // What explains an empty panel: a family gpusynth does not emit, read directly or through a variable.
          const causes = [
            ...[...absent].map(familyOf).filter((name) => !emitted.has(name)),
            ...[...unset].filter(([name]) => panel.exprs.some((e) => e.includes(`$${name}`))).flatMap(([, families]) => families),
          ];
          // Every other panel answers: no label or join of gpusynth's leaves one empty.
          if (!answers && !EMPTY_BY_DESIGN.includes(key)) expect(causes, key).not.toEqual([]);
          if (answers) count++;
          else for (const cause of causes) lacking.add(cause);
        }
        answered.push(`${board.file} ${count}/${board.panels.length}`);
      }
      expect([...lacking].filter((name) => emitted.has(name))).toEqual([]);
      expect([...lacking].filter((name) => !NOT_EMULATED.some((group) => group.test(name)))).toEqual([]);
      expect(answered).toEqual(ANSWERED);
    });
  });

  it("memory-pressure: KubeNodePressure is pending while the node reports MemoryPressure, and never fires: 5 minutes are under its for: (10m); the kubelet counts its eviction", async () => {
    const { scenario, store } = await pushed("blueprints/scenarios/memory-pressure.yaml", 35 * MINUTE);
    stores.push(store);
    const pressure = scenario.events.find((e) => e.kind === "NodeMemoryPressure");
    const relieved = scenario.events.find((e) => e.kind === "NodeMemoryPressureRelieved");
    if (pressure === undefined || relieved === undefined) throw new Error("the scenario no longer relieves its node's memory pressure");
    const rule = rules.find((r) => r.alert === "KubeNodePressure") as Rule;
    const pending = await store.queryRange(inline(rule.expr), scenario.stamp(0), scenario.stamp(scenario.lastScrape), 60);
    const minutes = pending.flatMap((s) => s.values.map(([t]) => minutesInto(scenario, t)));
    expect(minutes.length).toBeGreaterThan(0);
    for (const minute of minutes) {
      expect(minute).toBeGreaterThanOrEqual(pressure.t / MINUTE);
      expect(minute).toBeLessThanOrEqual(relieved.t / MINUTE + 1);
    }
    expect((await firedOver(scenario, store, rules, "KubeNodePressure")).filter((f) => f.alert.startsWith("KubeNodePressure "))).toEqual(
      [],
    );
    // The kubelet counts its eviction: the series KubeNodeEviction reads appears with it, at 1
    // (a counter's first value, which rate() cannot see: the alert stays quiet, as on a real node).
    const evictions = await store.query('kubelet_evictions{job="kubelet", metrics_path="/metrics"}', scenario.stamp(scenario.lastScrape));
    expect(evictions.map((s) => [s.metric.node, s.metric.eviction_signal, s.value[1]])).toEqual([[pressure.node, "memory.available", "1"]]);
  }, 60_000);

  it("gpu-fault: KubePodNotReady fires for the 8-GPU job's pod left Pending by the lost GPUs, once it has waited 15 minutes", async () => {
    const { scenario, store } = await pushed("blueprints/scenarios/gpu-fault.yaml", 90 * MINUTE, 5 * MINUTE);
    stores.push(store);
    const notReady = (await firedOver(scenario, store, rules, "KubePodNotReady")).filter((f) => f.alert === "KubePodNotReady (warning)");
    // The pods that waited 15 minutes or more for GPUs, from their submission, in the truth.
    const waited = scenario.events.flatMap((e) => {
      if (e.kind !== "WorkloadUnschedulable") return [];
      const submitted = scenario.events.find((s) => s.kind === "WorkloadSubmitted" && s.workload.name === e.workload.name)?.t ?? 0;
      const started = scenario.events.find((s) => s.kind === "WorkloadStarted" && s.workload.name === e.workload.name);
      return (started?.t ?? scenario.durationMs) - submitted >= 15 * MINUTE ? e.pods.map((p) => ({ pod: p.name, since: submitted })) : [];
    });
    expect(notReady.map((f) => f.labels.pod)).toEqual([...new Set(waited.map((w) => w.pod))]);
    for (const alert of notReady) {
      const since = Math.min(...waited.filter((w) => w.pod === alert.labels.pod).map((w) => w.since));
      expect(minutesInto(scenario, alert.firingFrom)).toBeGreaterThanOrEqual(since / MINUTE + 15);
    }
  }, 60_000);
});
