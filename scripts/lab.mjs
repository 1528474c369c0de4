// The pipeline lab without Docker: gpusynth → the OpenTelemetry Collector running the shipped
// otel-collector.yaml (pseudonymising) → Prometheus 3 (remote write) and VictoriaLogs (OTLP logs),
// all local processes, their data under .cache/lab/. The Go tools come from
// `bash scripts/build-tools.sh` (.ci/run builds them).
//
//   node scripts/lab.mjs [blueprint] [--speed N]   the lab, live, until Ctrl-C (`just lab`)
//   node scripts/lab.mjs --check                   a scenario run through it at high speed; the
//                                                  failed-job and slow-job journeys must answer from
//                                                  both backends and leakcheck find nothing (`just lab-check`)
//
// Ctrl-C (or the end of --check) stops every process it started.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COLLECTOR_READY, prometheusServer, startServer, victoriaServer } from "./local-servers.mjs";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "packages/cli/bin/gpusynth.js");
const TOOLS = {
  otelcol: join(root, ".cache/otelcol/otelcol-gpusynth"),
  prometheus: join(root, ".cache/prometheus3/prometheus"),
  victoriaLogs: join(root, ".cache/victorialogs/victoria-logs"),
};
const args = process.argv.slice(2);
const check = args.includes("--check");
const speedAt = args.indexOf("--speed");
const speed = speedAt >= 0 ? args[speedAt + 1] : "60";
const blueprint = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--speed") ?? "blueprints/lab.yaml";

for (const [tool, path] of Object.entries(TOOLS))
  if (!existsSync(path)) {
    // As the tests do: the check is skipped with a line saying how to get the tools, but CI must run it.
    if (check && process.env.CI !== "true") {
      console.log(`lab-check: skipped, no ${tool} at ${path} (bash scripts/build-tools.sh)`);
      process.exit(0);
    }
    console.error(`lab: no ${tool} at ${path}: bash scripts/build-tools.sh`);
    process.exit(2);
  }

const children = [];
/** Reports a child that ends before the lab stops it (gpusynth may end, with 0, at its --duration). */
function reportExit(name, child, log) {
  child.on("exit", (code, signal) => {
    if (!stopping && !(name === "gpusynth" && code === 0)) console.error(`lab: ${name} exited (${code ?? signal}):\n${log()}`);
  });
  children.push(child);
}

function start(name, command, argv, env = {}) {
  const child = spawn(command, argv, { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr.on("data", (chunk) => {
    log = (log + chunk).slice(-4000);
  });
  reportExit(name, child, () => log);
  return { child, log: () => log };
}

/** A server on free ports (local-servers.mjs), reported as the lab's other children are. */
async function server(spec) {
  const started = await startServer(spec);
  reportExit(spec.name, started.child, started.log);
  return started;
}
let stopping = false;
async function stopAll() {
  stopping = true;
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", resolve);
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 5000).unref();
        }),
    ),
  );
}
process.on("SIGINT", () => stopAll().then(() => process.exit(0)));
process.on("SIGTERM", () => stopAll().then(() => process.exit(0)));
// A failure (a server that cannot start, a backend that stops answering) stops the servers too.
process.on("uncaughtException", (error) => {
  console.error(error);
  stopAll().then(() => process.exit(1));
});

const dir = join(root, ".cache/lab");
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, "prometheus"), { recursive: true });
// Prometheus only receives: the collector remote-writes every series gpusynth emits.
writeFileSync(join(dir, "prometheus.yml"), "global: { scrape_interval: 15s }\n");
const [logsServer, prometheusStore] = await Promise.all([
  server(
    victoriaServer({
      name: "VictoriaLogs",
      command: TOOLS.victoriaLogs,
      args: (port) => [`-httpListenAddr=127.0.0.1:${port}`, `-storageDataPath=${join(dir, "victorialogs")}`],
    }),
  ),
  server(
    prometheusServer({
      command: TOOLS.prometheus,
      dir,
      dataDir: join(dir, "prometheus"),
      flags: ["--web.enable-remote-write-receiver"],
    }),
  ),
]);
const prometheus = `http://127.0.0.1:${prometheusStore.ports.web}`;
const victoriaLogs = `http://127.0.0.1:${logsServer.ports.http}`;
const salt = process.env.GPUSYNTH_PSEUDONYM_SALT ?? randomBytes(16).toString("hex");
const collector = await server({
  name: "the collector",
  command: TOOLS.otelcol,
  ports: ["grpc", "http", "health"],
  args: () => ["--config", join(root, "otel-collector.yaml"), "--config", "yaml:service::telemetry::metrics::level: none"],
  env: ({ grpc, http, health }) => ({
    ...process.env,
    GPUSYNTH_PSEUDONYM_SALT: salt,
    PROMETHEUS_REMOTE_WRITE: `${prometheus}/api/v1/write`,
    LOGS_OTLP_ENDPOINT: `${victoriaLogs}/insert/opentelemetry`,
    OTLP_GRPC_ENDPOINT: `127.0.0.1:${grpc}`,
    OTLP_HTTP_ENDPOINT: `127.0.0.1:${http}`,
    HEALTH_CHECK_ENDPOINT: `127.0.0.1:${health}`,
  }),
  ready: COLLECTOR_READY,
});

/** Runs gpusynth live into the collector; resolves when it exits (with --duration) . */
function gpusynth(extra) {
  const run = start("gpusynth", process.execPath, [bin, "run", "--listen", "none", "--logs", "otlp", ...extra], {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.ports.http}`,
  });
  return new Promise((resolve) => run.child.once("exit", (code) => resolve({ code, log: run.log() })));
}

const documented = new Map(
  [...readFileSync(join(root, "docs/queries.md"), "utf8").matchAll(/<!-- query: ([\w-]+) -->\n```promql\n([\s\S]*?)```/g)].map((m) => [
    m[1],
    m[2].trim(),
  ]),
);
async function promql(id) {
  const body = await (await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(documented.get(id))}`)).json();
  if (body.status !== "success") throw new Error(`${id}: ${JSON.stringify(body)}`);
  return body.data.result;
}
async function logsql(query) {
  await fetch(`${victoriaLogs}/internal/force_flush`);
  const response = await fetch(`${victoriaLogs}/select/logsql/query`, {
    method: "POST",
    body: new URLSearchParams({ query: `${query} | stats count() records` }),
  });
  const [row] = (await response.text())
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  return Number(row?.records ?? 0);
}

if (!check) {
  console.log(`lab: ${blueprint} at ×${speed} → the collector (otel-collector.yaml, pseudonymising) → Prometheus and VictoriaLogs
  Prometheus    ${prometheus}/graph        e.g. ${documented.get("failed-pods")}
  VictoriaLogs  ${victoriaLogs}/select/vmui  e.g. "k8s.event.reason":=Unschedulable
  leakcheck     node packages/cli/bin/gpusynth.js leakcheck --blueprint ${blueprint} --prometheus ${prometheus} --victorialogs ${victoriaLogs}
  the journeys' queries: docs/queries.md. Ctrl-C stops everything.`);
  const { code, log } = await gpusynth(["--speed", speed, blueprint]);
  if (!stopping) {
    console.error(`lab: gpusynth ended (${code}):\n${log}`);
    await stopAll();
    process.exit(1);
  }
} else {
  // Two scenarios one after the other (their cluster-wide series share job and instance, and
  // Prometheus refuses out-of-order samples): a failed job, and a slow one held by its quota. The
  // journeys read the Kubernetes events; the scheduler's log, which at these speeds is tens of
  // thousands of lines a second, is left out here (otel-collector.test.ts sends it through).
  const started = performance.now();
  const failures = [];
  const expect = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const runs = [
    ["blueprints/scenarios/gpu-fault.yaml", "1440", "10s"],
    ["blueprints/scenarios/quota-exhaustion.yaml", "900", "10s"],
  ];
  for (const [scenario, pace, duration] of runs) {
    const { code, log } = await gpusynth([
      "--speed",
      pace,
      "--interval",
      "1s",
      "--duration",
      duration,
      "--log-sources",
      "events",
      scenario,
    ]);
    expect(code === 0 && /OTLP logs: .*nothing lost/.test(log), `${scenario} ran and delivered everything:\n${log}`);
  }
  // Stopping the collector flushes what it holds.
  stopping = true;
  collector.child.kill("SIGTERM");
  await new Promise((resolve) => collector.child.once("exit", resolve));

  // The failed-job walk: the failed pods in Prometheus, and the same (pseudonymised) pods' events in VictoriaLogs.
  const failed = await promql("failed-pods");
  expect(failed.length > 0, "Prometheus answers failed-pods");
  expect((await promql("failed-pod-nodes")).length > 0, "Prometheus answers failed-pod-nodes");
  const pod = failed[0]?.metric.pod;
  expect(
    pod !== undefined && (await logsql(`"k8s.object.name":=${JSON.stringify(pod)}`)) > 0,
    "VictoriaLogs holds a failed pod's events under its pseudonym",
  );
  // The slow-job journey: the backlog per project, and why its pods wait.
  expect(
    (await promql("pending-per-project")).some((s) => Number(s.value[1]) > 0),
    "Prometheus answers pending-per-project",
  );
  expect((await logsql('"k8s.event.reason":=Unschedulable')) > 0, "VictoriaLogs holds the Unschedulable events");
  for (const [scenario] of runs) {
    const leak = spawnSync(
      process.execPath,
      [bin, "leakcheck", "--blueprint", scenario, "--prometheus", prometheus, "--victorialogs", victoriaLogs],
      {
        cwd: root,
        encoding: "utf8",
      },
    );
    expect(leak.status === 0, `leakcheck finds no name of ${scenario} in clear:\n${leak.stdout}${leak.stderr}`);
  }
  await stopAll();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (failures.length > 0) {
    console.error(`lab-check: FAILED in ${seconds} s:\n- ${failures.join("\n- ")}`);
    process.exit(1);
  }
  console.log(
    `lab-check: the failed-job and slow-job journeys answer from Prometheus and VictoriaLogs, and no name is in clear (${seconds} s)`,
  );
}
