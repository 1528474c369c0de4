// Measures, on every path from gpusynth's OTLP to a Prometheus-compatible store, the metric name and
// label keys that arrive for every family gpusynth emits, and writes them to
// signals/receiver-names.json (read by `gpusynth fidelity` for signals/name-fidelity.md). Every
// path is real software: the OpenTelemetry Collector of deploy/otelcol/builder.yaml, Prometheus 3
// (both built by scripts/build-tools.sh) and VictoriaMetrics 1.112 (Debian trixie's package,
// scripts/fetch-trixie.sh). Every family is sent once, as gpusynth sends it (the emission
// pipeline's OTLP/HTTP protobuf, each family its own target), with each of its label keys set; what
// the store holds is read back from its Prometheus API. `--check` measures again and fails when
// any path disagrees with the file.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { loadBlueprint } from "../packages/blueprint/dist/index.js";
import { ClusterMetrics, LABEL_PATTERN } from "../packages/constructs/dist/index.js";
import { encodeMetrics, MetricsPipeline, SCRAPE_REPORT } from "../packages/emit/dist/index.js";
import { COLLECTOR_READY, freePort, prometheusServer, sleep, startServer, victoriaServer } from "./local-servers.mjs";

const root = new URL("..", import.meta.url).pathname;
const OUT = join(root, "signals/receiver-names.json");
const BINARIES = {
  otelcol: join(root, ".cache/otelcol/otelcol-gpusynth"),
  prometheus3: join(root, ".cache/prometheus3/prometheus"),
  victoriaMetrics: join(process.env.GPUSYNTH_VICTORIA_METRICS_BIN ?? join(root, ".cache/victoria-metrics/usr/bin"), "victoria-metrics"),
};
/** A converted Kubernetes label for the families that carry any (kube-state-metrics' label_<key>). */
const EXAMPLE_LABEL = "label_app";
const check = process.argv.includes("--check");

const missing = Object.values(BINARIES).filter((binary) => !existsSync(binary));
if (missing.length > 0) {
  const message = `measure-receiver-names: missing ${missing.join(", ")} (bash scripts/build-tools.sh; bash scripts/fetch-trixie.sh)`;
  if (process.env.CI === "true" || !check) {
    console.error(message);
    process.exit(1);
  }
  console.log(`${message}; signals/receiver-names.json not checked here (CI checks it)`);
  process.exit(0);
}

/**
 * A server on free ports (local-servers.mjs) with its own temporary folder, stopped (SIGTERM,
 * then SIGKILL) and the folder removed by stop().
 */
async function start(spec, dir) {
  let started;
  try {
    started = await startServer(spec);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const { child, ports, log } = started;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    ports,
    log,
    stop: async () => {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Prometheus 3 on a free port with `config` (YAML text) and `flags`. */
async function prometheus3(config, flags) {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-prometheus3-"));
  writeFileSync(join(dir, "prometheus.yml"), config);
  const server = await start(prometheusServer({ name: "Prometheus 3", command: BINARIES.prometheus3, dir, flags }), dir);
  const url = `http://127.0.0.1:${server.ports.web}`;
  return { ...server, url, series: () => prometheusSeries(url) };
}

/** The collector with an OTLP/HTTP receiver and `exporters` in its one metrics pipeline; resolves once it runs. */
async function collector(exporters) {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-otelcol-"));
  const server = await start(
    {
      name: "the collector",
      command: BINARIES.otelcol,
      ports: ["otlp"],
      args: ({ otlp }) => {
        writeFileSync(
          join(dir, "collector.yaml"),
          stringify({
            receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${otlp}` } } } },
            exporters,
            service: {
              telemetry: { metrics: { level: "none" } },
              pipelines: { metrics: { receivers: ["otlp"], exporters: Object.keys(exporters) } },
            },
          }),
        );
        return ["--config", join(dir, "collector.yaml")];
      },
      ready: COLLECTOR_READY,
    },
    dir,
  );
  return { ...server, otlp: `http://127.0.0.1:${server.ports.otlp}/v1/metrics` };
}

async function post(url, bodies) {
  for (const body of bodies) {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/x-protobuf" }, body });
    if (!response.ok) throw new Error(`${url} refused a request: ${response.status} ${await response.text()}`);
  }
}

async function prometheusSeries(url) {
  const body = await (await fetch(`${url}/api/v1/series?match[]=${encodeURIComponent('{__name__=~".+"}')}&start=0`)).json();
  if (body.status !== "success") throw new Error(`${url}: ${JSON.stringify(body)}`);
  return body.data;
}

/** Prometheus 3 as a remote-write receiver, written to by the collector's prometheus_remote_write exporter with `settings`. */
async function remoteWrite(bodies, settings) {
  const store = await prometheus3("global: { scrape_interval: 1m }\n", ["--web.enable-remote-write-receiver"]);
  try {
    const agent = await collector({ prometheus_remote_write: { endpoint: `${store.url}/api/v1/write`, ...settings } });
    await post(agent.otlp, bodies);
    await agent.stop(); // flushes the exporter
    return await store.series();
  } finally {
    await store.stop();
  }
}

/** The collector's prometheus exporter, with its defaults, scraped by Prometheus 3 (honor_labels: its job and instance are the targets'). */
async function scrapedExporter(bodies, families) {
  const port = await freePort();
  const agent = await collector({ prometheus: { endpoint: `127.0.0.1:${port}` } });
  const store = await prometheus3(
    stringify({
      global: { scrape_interval: "1s", scrape_timeout: "1s" },
      scrape_configs: [{ job_name: "otelcol", honor_labels: true, static_configs: [{ targets: [`127.0.0.1:${port}`] }] }],
    }),
    [],
  );
  try {
    await post(agent.otlp, bodies);
    const ids = new Set(families.map((f) => f.id));
    for (let i = 0; i < 100; i++) {
      const series = await store.series();
      if (new Set(series.map((s) => s.job).filter((job) => ids.has(job))).size === ids.size) return series;
      await sleep(200);
    }
    throw new Error("Prometheus did not scrape every family from the collector's prometheus exporter");
  } finally {
    await Promise.all([agent.stop(), store.stop()]);
  }
}

/** Prometheus 3's own OTLP receiver with `translation_strategy`. */
async function prometheusOtlp(bodies, strategy) {
  const store = await prometheus3(stringify({ global: { scrape_interval: "1m" }, otlp: { translation_strategy: strategy } }), [
    "--web.enable-otlp-receiver",
  ]);
  try {
    await post(`${store.url}/api/v1/otlp/v1/metrics`, bodies);
    return await store.series();
  } finally {
    await store.stop();
  }
}

/** VictoriaMetrics' single-node server's OTLP ingestion with `flags`. */
async function victoriaMetrics(bodies, flags) {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-receiver-"));
  const server = await start(
    victoriaServer({
      name: "VictoriaMetrics",
      command: BINARIES.victoriaMetrics,
      args: (port) => [`-httpListenAddr=127.0.0.1:${port}`, `-storageDataPath=${dir}`, "-search.latencyOffset=0s", ...flags],
    }),
    dir,
  );
  const url = `http://127.0.0.1:${server.ports.http}`;
  try {
    await post(`${url}/opentelemetry/v1/metrics`, bodies);
    await fetch(`${url}/internal/force_flush`);
    return await prometheusSeries(url);
  } finally {
    await server.stop();
  }
}

const shipped = parse(readFileSync(join(root, "otel-collector.yaml"), "utf8")).exporters.prometheus_remote_write;
const { endpoint: _, ...shippedSettings } = shipped;

/** The paths, in the order of signals/name-fidelity.md's columns. */
const PATHS = [
  {
    id: "prw-default",
    title: "collector `prometheus_remote_write` exporter, defaults → Prometheus 3 remote-write receiver",
    measure: (bodies) => remoteWrite(bodies, {}),
  },
  {
    id: "prw-shipped",
    title: `collector \`prometheus_remote_write\` exporter as otel-collector.yaml sets it (\`translation_strategy: ${shippedSettings.translation_strategy}\`) → Prometheus 3`,
    measure: (bodies) => remoteWrite(bodies, shippedSettings),
  },
  {
    id: "prometheus-exporter",
    title: "collector `prometheus` exporter, defaults, scraped by Prometheus 3 (`honor_labels: true`)",
    measure: (bodies, families) => scrapedExporter(bodies, families),
  },
  {
    id: "prom3-otlp",
    title: "Prometheus 3 OTLP receiver, default `translation_strategy` (UnderscoreEscapingWithSuffixes)",
    measure: (bodies) => prometheusOtlp(bodies, "UnderscoreEscapingWithSuffixes"),
  },
  {
    id: "prom3-otlp-without-suffixes",
    title: "Prometheus 3 OTLP receiver, `translation_strategy: UnderscoreEscapingWithoutSuffixes`",
    measure: (bodies) => prometheusOtlp(bodies, "UnderscoreEscapingWithoutSuffixes"),
  },
  {
    id: "vm-default",
    title: "VictoriaMetrics 1.112 OTLP ingestion, default",
    measure: (bodies) => victoriaMetrics(bodies, []),
  },
  {
    id: "vm-prometheus-naming",
    title: "VictoriaMetrics 1.112 OTLP ingestion, `-opentelemetry.usePrometheusNaming`",
    measure: (bodies) => victoriaMetrics(bodies, ["-opentelemetry.usePrometheusNaming"]),
  },
];

/** One target per family, with one sample carrying each of the family's label keys. */
function probes(families) {
  return families.map((family) => ({
    target: { job: family.id, host: "receiver-probe", port: 1, path: "/metrics" },
    samples: [
      { family, labels: Object.fromEntries(family.labels.map((key) => [key === LABEL_PATTERN ? EXAMPLE_LABEL : key, "x"])), value: 1 },
    ],
  }));
}

/** The OTLP/HTTP protobuf requests gpusynth's pipeline sends for the probes. */
async function requestBodies(families) {
  const bodies = [];
  const sink = {
    export: async (metrics) => {
      for (const request of encodeMetrics(metrics, "protobuf", 4 * 2 ** 20).requests) bodies.push(request.body);
      return true;
    },
  };
  await new MetricsPipeline(sink).scrape(probes(families), Date.now());
  return bodies;
}

/**
 * What a store holds for each family, found by its target: the family's id is the job (or the
 * resource's service.name, however the store spells it). The store's own identity labels (job,
 * instance, and VictoriaMetrics' dotted resource attributes) are not the family's.
 */
function storedByFamily(series, families) {
  const byId = new Map(families.map((f) => [f.id, f]));
  // The receiver's report on each scrape rides with every probe: its series (the receiver's own
  // names, not a vendor's) are not a family's.
  const reports = new Set(Object.values(SCRAPE_REPORT).map((f) => f.name));
  const stored = {};
  for (const s of series) {
    if (s.__name__ === "target_info" || reports.has(s.__name__)) continue;
    const key = Object.keys(s).find((k) => byId.has(s[k]) && /^(service[._]name|job)$/.test(k));
    const family = byId.get(s[key]);
    if (family === undefined) continue;
    const identity = new Set(["__name__", "job", "instance", key, ...Object.keys(s).filter((k) => /^(service|server|url)[._]/.test(k))]);
    stored[family.name] = {
      name: s.__name__,
      labels: Object.keys(s)
        .filter((k) => !identity.has(k))
        .sort(),
    };
  }
  const absent = families.filter((f) => stored[f.name] === undefined).map((f) => f.name);
  if (absent.length > 0) throw new Error(`nothing stored for ${absent.join(", ")}`);
  return Object.fromEntries(Object.entries(stored).sort(([a], [b]) => a.localeCompare(b)));
}

const families = new ClusterMetrics(loadBlueprint(join(root, "blueprints/lab.yaml")).blueprint).families();
const bodies = await requestBodies(families);
// Two paths at a time: each starts a store and perhaps a collector, on a 2-core machine.
const paths = {};
for (let i = 0; i < PATHS.length; i += 2) {
  const measured = await Promise.all(
    PATHS.slice(i, i + 2).map(async (path) => {
      try {
        return [path.id, { title: path.title, families: storedByFamily(await path.measure(bodies, families), families) }];
      } catch (cause) {
        throw new Error(`${path.id}: ${cause.message}`);
      }
    }),
  );
  for (const [id, result] of measured) paths[id] = result;
}
// One family a line, so that a change in what a path stores is a one-line diff.
const measured = `${JSON.stringify(
  {
    measuredWith: {
      collector: "OpenTelemetry Collector v0.161.0 (deploy/otelcol/builder.yaml)",
      prometheus: "Prometheus 3.16.0 (github.com/prometheus/prometheus v0.316.0)",
      victoriaMetrics: "VictoriaMetrics 1.112.0 (Debian trixie victoria-metrics 1.112.0+ds1-2)",
    },
    sentLabelForKubernetesLabels: EXAMPLE_LABEL,
    paths,
  },
  (key, value) => (key !== "" && value?.labels !== undefined ? JSON.stringify(value) : value),
  2,
).replace(/"(\{\\"name.*\})"(,?)$/gm, (_, json, comma) => `${JSON.parse(`"${json}"`)}${comma}`)}\n`;
if (check) {
  const kept = existsSync(OUT) ? readFileSync(OUT, "utf8") : "";
  if (kept !== measured) {
    console.error("signals/receiver-names.json disagrees with what the receivers store: run `just gen` and review the diff");
    // The lines that differ, so a disagreement in CI says what it is.
    const keptLines = kept.split("\n");
    const measuredLines = measured.split("\n");
    const shown = [];
    for (let i = 0; i < Math.max(keptLines.length, measuredLines.length) && shown.length < 10; i++)
      if (keptLines[i] !== measuredLines[i]) shown.push(`line ${i + 1}:\n- ${keptLines[i]?.trim()}\n+ ${measuredLines[i]?.trim()}`);
    for (const line of shown) console.error(line);
    process.exit(1);
  }
  console.log("signals/receiver-names.json agrees with every measured path");
} else {
  writeFileSync(OUT, measured);
  console.log("wrote signals/receiver-names.json");
}
