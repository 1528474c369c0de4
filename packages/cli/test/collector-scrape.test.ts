/**
 * "What a collector's receivers would produce", measured: a live run of the lab both serves its
 * targets and pushes OTLP, while a real collector (deploy/otelcol/builder.yaml, v0.161.0) scrapes
 * it through /sd with its `prometheus` receiver and takes the push with its `otlp` receiver, each
 * written to its own file exporter. The two are compared family by family: name, type, unit,
 * monotonicity, temporality, start time, value type, every attribute key and value, the
 * resources and the scope. The differences that remain are the ones docs/emission.md documents,
 * with the receiver's source as the reason, and each is asserted here as it is, so a change on
 * either side shows.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { freePort } from "../../emit/test/prometheus-server.js";
import { readSignals } from "../src/signals-doc.js";
import { deliveryReport, ensureStopped, startLive } from "./live-process.js";
import { Collector, collectorVariable, otelcolBinary } from "./otel-collector.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}
interface Point {
  attributes?: KeyValue[];
  startTimeUnixNano?: string;
  asDouble?: number;
  asInt?: string;
}
interface Metric {
  name: string;
  description?: string;
  unit?: string;
  metadata?: KeyValue[];
  gauge?: { dataPoints: Point[] };
  sum?: { dataPoints: Point[]; aggregationTemporality?: number; isMonotonic?: boolean };
}
interface MetricsRequest {
  resourceMetrics?: Array<{
    resource: { attributes?: KeyValue[] };
    scopeMetrics: Array<{ scope: { name: string; version?: string }; metrics: Metric[] }>;
  }>;
}

const attributes = (list: KeyValue[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, Object.values(a.value)[0]]));
/**
 * A point's label set as text, its keys in code-unit order (the same set written in any order
 * gives the same text), made straight from the attribute list: the files hold hundreds of
 * thousands of points, and a record made of each first cost a fifth of reading them.
 */
const labelSetText = (list: KeyValue[] | undefined): string =>
  JSON.stringify(
    (list ?? [])
      .map((a) => [a.key, Object.values(a.value)[0]])
      .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0)),
  );

/** One family of one target, as a consumer sees it over the whole run. */
interface Family {
  shape: {
    type: string;
    unit: string;
    description: string;
    temporality: number | undefined;
    monotonic: boolean | undefined;
    startTimes: string[];
    valueTypes: string[];
  };
  metadata: Record<string, unknown>;
  series: Set<string>;
}

/** What one file exporter wrote: the resources, scopes and families by target. */
function read(file: string) {
  const resources = new Map<string, Record<string, unknown>>();
  const scopes = new Set<string>();
  const families = new Map<string, Family>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line === "") continue;
    for (const rm of (JSON.parse(line) as MetricsRequest).resourceMetrics ?? []) {
      const resource = attributes(rm.resource.attributes);
      const target = `${resource["service.name"]}/${resource["service.instance.id"]}`;
      resources.set(target, resource);
      for (const sm of rm.scopeMetrics) {
        scopes.add(JSON.stringify(sm.scope));
        for (const m of sm.metrics) {
          const data = m.gauge ?? m.sum;
          const points = data?.dataPoints ?? [];
          const key = `${target} ${m.name}`;
          const family = families.get(key) ?? {
            shape: {
              type: m.gauge !== undefined ? "gauge" : m.sum !== undefined ? "sum" : Object.keys(m).join(),
              unit: m.unit ?? "",
              description: m.description ?? "",
              temporality: m.sum?.aggregationTemporality,
              monotonic: m.sum?.isMonotonic,
              startTimes: [],
              valueTypes: [],
            },
            metadata: attributes(m.metadata),
            series: new Set<string>(),
          };
          for (const p of points) {
            family.series.add(labelSetText(p.attributes));
            const start = p.startTimeUnixNano === undefined || p.startTimeUnixNano === "0" ? "none" : "set";
            // The file exporter's JSON leaves a zero value out, as proto3 JSON does: no asInt is a double.
            const value = p.asInt !== undefined ? "int" : "double";
            if (!family.shape.startTimes.includes(start)) family.shape.startTimes.push(start);
            if (!family.shape.valueTypes.includes(value)) family.shape.valueTypes.push(value);
          }
          families.set(key, family);
        }
      }
    }
  }
  return { resources, scopes, families };
}

/**
 * The fewest scrapes of any target the receiver has written to `file` so far (0 before it has all
 * eight), counted as the file grows: each call parses only the lines written since the last
 * (the file gains megabytes a second, and the wait polls it four times a second).
 */
function scrapeCounter(file: string): () => number {
  const scrapes = new Map<string, number>();
  let counted = 0;
  return () => {
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    // The last line may be half written: counted once it ends.
    const end = text.lastIndexOf("\n") + 1;
    for (const line of text.slice(counted, end).split("\n")) {
      if (line === "") continue;
      for (const rm of (JSON.parse(line) as MetricsRequest).resourceMetrics ?? []) {
        const instance = String(attributes(rm.resource.attributes)["service.instance.id"]);
        scrapes.set(instance, (scrapes.get(instance) ?? 0) + 1);
      }
    }
    counted = Math.max(counted, end);
    return scrapes.size < 8 ? 0 : Math.min(...scrapes.values());
  };
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The series the receiver adds to every scrape about the scrape itself (Prometheus'
 * scrape/scrape.go at v0.314.0, the version receiver/prometheusreceiver v0.161.0 requires) that
 * gpusynth does not send: no scrape is timed, and it keeps no series cache (signals/receiver.md).
 * It sends `up`, `scrape_samples_scraped` and `scrape_samples_post_metric_relabeling`.
 */
const RECEIVER_OWN = ["scrape_duration_seconds", "scrape_series_added"];

/**
 * The two ways a receiver finds gpusynth's targets: plainly through /sd, as docs/emission.md's
 * scrape block does (every series as its exporter writes it), and through the ServiceMonitors of
 * deploy/prometheus/kube-prometheus.yml, as a collector whose Target Allocator reads them does — a
 * blueprint with `telemetry.serviceMonitors` (the lab's, with it on) pushes what that gives.
 */
const DISCOVERIES = [
  {
    name: "plainly through /sd",
    serviceMonitors: false,
    scrapeConfigs: (sd: string) => [
      { job_name: "gpusynth", scrape_interval: "1s", scrape_timeout: "1s", http_sd_configs: [{ url: sd, refresh_interval: "1s" }] },
    ],
  },
  {
    name: "through kube-prometheus' and the GPU Operator's ServiceMonitors",
    serviceMonitors: true,
    // The Prometheus configuration, each `$` written `$$` as a collector's configuration needs
    // (it expands `${…}` itself: the prometheus receiver's README, "Getting Started").
    scrapeConfigs: (sd: string) =>
      (
        parse(readFileSync(join(root, "deploy/prometheus/kube-prometheus.yml"), "utf8").replaceAll("$", "$$$$")) as {
          scrape_configs: Record<string, unknown>[];
        }
      ).scrape_configs.map((job) => ({
        ...job,
        scrape_interval: "1s",
        scrape_timeout: "1s",
        http_sd_configs: [{ url: sd, refresh_interval: "1s" }],
      })),
  },
] as const;

describe.skipIf(otelcolBinary === "").each(DISCOVERIES)(
  "a collector's prometheus receiver scraping gpusynth $name, next to gpusynth's own push",
  (discovery) => {
    const dir = mkdtempSync(join(tmpdir(), "gpusynth-scrape-"));
    const files = { pushed: join(dir, "pushed.jsonl"), scraped: join(dir, "scraped.jsonl") };
    let pushed: ReturnType<typeof read>;
    let scraped: ReturnType<typeof read>;

    beforeAll(async () => {
      const lab = parse(readFileSync(join(root, "blueprints/lab.yaml"), "utf8")) as { telemetry?: Record<string, unknown> };
      const blueprint = join(dir, "lab.yaml");
      writeFileSync(blueprint, stringify({ ...lab, telemetry: { ...lab.telemetry, serviceMonitors: discovery.serviceMonitors } }));
      // gpusynth first, so the receiver's first discovery finds every target; its push waits in
      // its queue until the collector is up (docs/emission.md, "Delivery guarantees"). At ×1 the lab
      // barely changes in a few seconds, so the scrapes and the pushes see the same series.
      const grpc = `127.0.0.1:${await freePort()}`;
      // On a port it binds itself (:0), so none can be taken from it between choosing and binding.
      const live = startLive(["--listen", "127.0.0.1:0", "--interval", "1s", "--logs", "none", "--json", blueprint], {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://${grpc}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      });
      const served = await live.scrapeUrl();
      const config = join(dir, "collector.yaml");
      writeFileSync(
        config,
        stringify({
          receivers: {
            otlp: { protocols: { grpc: { endpoint: collectorVariable("OTLP_GRPC_ENDPOINT") } } },
            // Every second.
            // discovery_reload_on_startup: the targets of the first discovery are scraped at once,
            // not after the scrape manager's first 5 s reload tick.
            prometheus: { discovery_reload_on_startup: true, config: { scrape_configs: discovery.scrapeConfigs(`${served}/sd`) } },
          },
          exporters: { "file/pushed": { path: files.pushed }, "file/scraped": { path: files.scraped } },
          extensions: { health_check: { endpoint: collectorVariable("HEALTH_CHECK_ENDPOINT") } },
          service: {
            extensions: ["health_check"],
            pipelines: {
              "metrics/pushed": { receivers: ["otlp"], exporters: ["file/pushed"] },
              "metrics/scraped": { receivers: ["prometheus"], exporters: ["file/scraped"] },
            },
          },
        }),
      );
      const collector = await Collector.start([config], {}, { OTLP_GRPC_ENDPOINT: grpc });
      try {
        // Until the receiver has scraped every target twice (a loaded machine may take longer
        // than the usual two seconds), and then a second more of pushes.
        const scrapesPerTarget = scrapeCounter(files.scraped);
        await until(() => scrapesPerTarget() >= 2, 30_000);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const { code } = await live.stop("SIGINT");
        expect(code, live.stderr()).toBe(0);
        expect(deliveryReport(live.stdout(), "metrics").nothingLost, live.stderr()).toBe(true);
      } finally {
        ensureStopped(live);
        await collector.stop();
      }
      pushed = read(files.pushed);
      scraped = read(files.scraped);
    }, 60_000);

    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("gives every target the same resource attributes and scope", () => {
      // Four cluster-wide exporters (kube-state-metrics with its telemetry port besides), and
      // dcgm-exporter, the kubelet and node-exporter on each of the lab's four nodes.
      expect(pushed.resources.size).toBe(17);
      expect(Object.fromEntries(pushed.resources)).toEqual(Object.fromEntries(scraped.resources));
      // dcgm-exporter's pods: their discovery labels become the receiver's k8s.* attributes.
      const dcgm = [...pushed.resources.values()].filter((r) => r["service.name"] === "nvidia-dcgm-exporter");
      expect(dcgm.length).toBe(4);
      for (const r of dcgm) expect(Object.keys(r)).toEqual(expect.arrayContaining(["k8s.pod.name", "k8s.namespace.name", "k8s.node.name"]));
      expect([...pushed.scopes]).toEqual([...scraped.scopes]);
    });

    it.runIf(discovery.serviceMonitors)("carries the labels kube-prometheus' rules select on, as the ServiceMonitors give them", () => {
      const seriesOf = (job: string, name: string) =>
        [...pushed.families]
          .filter(([key]) => key.startsWith(`${job}/`) && key.endsWith(` ${name}`))
          .flatMap(([, family]) => [...family.series].map((x) => Object.fromEntries(JSON.parse(x) as [string, string][])));
      // The kubelet's cAdvisor series: kube-prometheus' cadvisorSelector, on their pods' own namespace and pod (honorLabels).
      const cpu = seriesOf("kubelet", "container_cpu_usage_seconds_total");
      expect(cpu.length).toBeGreaterThan(0);
      for (const labels of cpu) {
        expect(labels).toMatchObject({ metrics_path: "/metrics/cadvisor", endpoint: "https-metrics", service: "kubelet" });
        expect(labels.node).toMatch(/./);
      }
      expect(cpu.some((labels) => labels.namespace?.startsWith("runai-"))).toBe(true);
      // node-exporter: the instance is the node, the series carry the exporter's pod, which kube-prometheus joins to kube_pod_info.
      const exporters = [...pushed.resources.values()].filter((r) => r["service.name"] === "node-exporter");
      expect(exporters.map((r) => r["service.instance.id"]).sort()).toEqual(exporters.map((r) => r["k8s.node.name"]).sort());
      for (const labels of seriesOf("node-exporter", "node_load1"))
        expect(labels).toMatchObject({
          namespace: "monitoring",
          container: "kube-rbac-proxy",
          pod: expect.stringMatching(/^node-exporter-/),
        });
      // dcgm-exporter (honorLabels false): the workload's pod is exported_pod, the exporter's is pod.
      const util = seriesOf("nvidia-dcgm-exporter", "DCGM_FI_DEV_GPU_UTIL");
      expect(util.some((labels) => labels.exported_pod !== undefined)).toBe(true);
      for (const labels of util) expect(labels.pod).toMatch(/^nvidia-dcgm-exporter-/);
    });

    it("documents every resource attribute it sends, and the scope, in signals/receiver.md", () => {
      const documented = readFileSync(join(root, "signals/receiver.md"), "utf8");
      const rows = new Set([...documented.matchAll(/^\| `([^`]+)` +\|/gm)].map((m) => m[1]));
      const sent = new Set([...pushed.resources.values()].flatMap((r) => Object.keys(r)));
      expect([...sent].filter((key) => !rows.has(key))).toEqual([]);
      for (const scope of pushed.scopes) {
        const { name, version } = JSON.parse(scope) as { name: string; version: string };
        expect(documented).toContain(`\`${name}\``);
        expect(documented).toContain(`\`${version}\``);
      }
    });

    it("sends every family of every target the receiver produces, its scrape report but the duration and the series added", () => {
      const own = [...scraped.families.keys()].filter((k) => !pushed.families.has(k));
      expect([...new Set(own.map((k) => k.split(" ")[1]))].sort()).toEqual(RECEIVER_OWN);
      expect(own.length).toBe(RECEIVER_OWN.length * scraped.resources.size);
      expect([...pushed.families.keys()].filter((k) => !scraped.families.has(k))).toEqual([]);
    });

    it("gives each family the receiver's name, type, unit, temporality, monotonicity, start time and value type", () => {
      expect(pushed.families.size).toBeGreaterThan(100);
      for (const [key, family] of pushed.families) expect(family.shape, key).toEqual(scraped.families.get(key)?.shape);
    });

    it("sends the series the receiver scraped, with every attribute key and value", () => {
      // The lab's time of day is the wall clock's: a pod may start or end on a GPU in the seconds
      // compared, and the last push comes a second after the last scrape. A series on one side only
      // is then its subject's (a GPU's UUID, a pod's uid; Run:ai's workload and pod ids) before or
      // after the change, and the other side holds that subject with other labels, or not at all;
      // any other difference is a defect.
      const subject = (series: string) => {
        const labels = Object.fromEntries(JSON.parse(series) as [string, unknown][]);
        return (labels.UUID ?? labels.uid ?? labels.workload_id ?? labels.pod_uuid ?? labels.job_uuid ?? labels.workload_uuid) as
          | string
          | undefined;
      };
      for (const [key, family] of pushed.families) {
        const theirs = scraped.families.get(key)?.series ?? new Set<string>();
        const onlyOneSide = [...[...family.series].filter((x) => !theirs.has(x)), ...[...theirs].filter((x) => !family.series.has(x))];
        expect(
          onlyOneSide.filter((x) => subject(x) === undefined),
          key,
        ).toEqual([]);
        // A few subjects change in seconds; most series of a family of several are on both sides.
        const shared = [...family.series].filter((x) => theirs.has(x)).length;
        if (family.series.size >= 5) expect(shared, key).toBeGreaterThanOrEqual(0.8 * family.series.size);
      }
    });

    it("lacks only the receiver's metric metadata, prometheus.type, which the OpenTelemetry JS SDK has no field for", () => {
      // The family's type as its exporter declares it (signals/); the receiver writes "unknown" for untyped.
      const declared = new Map(readSignals(join(root, "signals")).map((f) => [f.name, f.type === "untyped" ? "unknown" : f.type]));
      for (const [key, family] of scraped.families) {
        const name = key.split(" ")[1] as string;
        if (RECEIVER_OWN.includes(name)) continue;
        expect(family.metadata, key).toEqual({ "prometheus.type": declared.get(name) });
        expect(pushed.families.get(key)?.metadata, key).toEqual({});
      }
    });
  },
);
