// Measures what a real OTLP receiver stores for every metric family gpusynth emits, and writes it
// to signals/receiver-names.json (read by `gpusynth fidelity` for signals/name-fidelity.md):
// VictoriaMetrics 1.112 (Debian trixie's package, fetched into .cache/ by scripts/fetch-trixie.sh),
// by default and with -opentelemetry.usePrometheusNaming. Every family is sent once, as gpusynth
// sends it (the emission pipeline's OTLP/HTTP protobuf, each family its own target), with each of
// its label keys set; the metric name and label keys the receiver stored are read back from its
// Prometheus API. `--check` measures again and fails when the receiver disagrees with the file.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadBlueprint } from "../packages/blueprint/dist/index.js";
import { ClusterMetrics, LABEL_PATTERN } from "../packages/constructs/dist/index.js";
import { encodeMetrics, MetricsPipeline } from "../packages/emit/dist/index.js";

const root = new URL("..", import.meta.url).pathname;
const OUT = join(root, "signals/receiver-names.json");
const binary = join(process.env.GPUSYNTH_VICTORIA_METRICS_BIN ?? join(root, ".cache/victoria-metrics/usr/bin"), "victoria-metrics");
const MODES = { default: [], usePrometheusNaming: ["-opentelemetry.usePrometheusNaming"] };
/** A converted Kubernetes label for the families that carry any (kube-state-metrics' label_<key>). */
const EXAMPLE_LABEL = "label_app";
const check = process.argv.includes("--check");

if (!existsSync(binary)) {
  const message = `measure-receiver-names: no VictoriaMetrics at ${binary} (bash scripts/fetch-trixie.sh)`;
  if (process.env.CI === "true" || !check) {
    console.error(message);
    process.exit(1);
  }
  console.log(`${message}; signals/receiver-names.json not checked here (CI checks it)`);
  process.exit(0);
}

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** One target per family, with one sample carrying each of the family's label keys. */
function probes(families) {
  return families.map((family) => ({
    target: { job: family.id, host: "receiver-probe", port: 1, path: "/metrics" },
    samples: [
      {
        family,
        labels: Object.fromEntries(family.labels.map((key) => [key === LABEL_PATTERN ? EXAMPLE_LABEL : key, "x"])),
        value: 1,
        ...(family.type === "counter" ? { startMs: Date.now() - 60_000 } : {}),
      },
    ],
  }));
}

async function measure(families, flags) {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-receiver-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = spawn(binary, [`-httpListenAddr=127.0.0.1:${port}`, `-storageDataPath=${dir}`, "-search.latencyOffset=0s", ...flags], {
    stdio: "ignore",
  });
  try {
    for (
      let i = 0;
      i < 100 &&
      !(await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    )
      await new Promise((resolve) => setTimeout(resolve, 100));
    const bodies = [];
    const sink = {
      export: async (metrics) => {
        for (const request of encodeMetrics(metrics, "protobuf", 4 * 2 ** 20).requests) bodies.push(request.body);
        return true;
      },
    };
    await new MetricsPipeline(sink).scrape(probes(families), Date.now());
    for (const body of bodies) {
      const response = await fetch(`${url}/opentelemetry/v1/metrics`, {
        method: "POST",
        headers: { "content-type": "application/x-protobuf" },
        body,
      });
      if (!response.ok) throw new Error(`VictoriaMetrics refused a request: ${response.status} ${await response.text()}`);
    }
    await fetch(`${url}/internal/force_flush`);
    const series = (await (await fetch(`${url}/api/v1/series?match[]=${encodeURIComponent('{__name__=~".+"}')}&start=0`)).json()).data;
    const byId = new Map(families.map((f) => [f.id, f]));
    const stored = {};
    for (const s of series) {
      // The family is the target it was sent as: its resource's service.name, however stored.
      const key = Object.keys(s).find((k) => byId.has(s[k]) && /^(service[._]name|job)$/.test(k));
      const family = byId.get(s[key]);
      if (family === undefined) continue;
      const resource = new Set(["__name__", key, ...Object.keys(s).filter((k) => /^(service|server|url)[._]/.test(k))]);
      stored[family.name] = {
        name: s.__name__,
        labels: Object.keys(s)
          .filter((k) => !resource.has(k))
          .sort(),
      };
    }
    const missing = families.filter((f) => stored[f.name] === undefined).map((f) => f.name);
    if (missing.length > 0) throw new Error(`VictoriaMetrics stored nothing for ${missing.join(", ")}`);
    return Object.fromEntries(Object.entries(stored).sort(([a], [b]) => a.localeCompare(b)));
  } finally {
    server.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

const families = new ClusterMetrics(loadBlueprint(join(root, "blueprints/lab.yaml")).blueprint).families();
const modes = Object.fromEntries(
  await Promise.all(Object.entries(MODES).map(async ([mode, flags]) => [mode, await measure(families, flags)])),
);
const measured = `${JSON.stringify(
  {
    receiver: "VictoriaMetrics 1.112.0 (Debian trixie victoria-metrics 1.112.0+ds1-2), /opentelemetry/v1/metrics",
    sentLabelForKubernetesLabels: EXAMPLE_LABEL,
    modes,
  },
  null,
  2,
)}\n`;
if (check) {
  if (readFileSync(OUT, "utf8") !== measured) {
    console.error("signals/receiver-names.json disagrees with what VictoriaMetrics stores: run `just gen` and review the diff");
    process.exit(1);
  }
  console.log("signals/receiver-names.json agrees with VictoriaMetrics");
} else {
  writeFileSync(OUT, measured);
  console.log("wrote signals/receiver-names.json");
}
