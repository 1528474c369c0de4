// What the scripts and tests that start local servers share (the lab, the receiver-name
// measurements, the tests' Prometheus, VictoriaLogs, vmagent and collector; types in
// local-servers.d.mts): a free loopback port, a pause, and starting a server that says it serves.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";

/** A loopback port nothing listens on now. */
export const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const ATTEMPTS = 3;
const READY_WITHIN_MS = 30_000;

/**
 * Starts a server on free loopback ports and resolves, with its process, its ports and its log,
 * once its own log says it serves (`ready`). A free port is only free when it is chosen: on a
 * machine busy with other servers (the suite's, beside these scripts) another process may bind it
 * first, and even answer a readiness probe there. Then the server exits ("address already in
 * use") and starts again on other ports, up to three times. Its output is read while it runs
 * (a full pipe would stop it), and its last megabyte kept.
 *
 * `args` and `env` are given the ports ({ [name]: port } for each name in `ports`).
 */
export async function startServer({ name, command, ports: names, args, env = () => process.env, ready }) {
  for (let attempt = 1; ; attempt++) {
    const ports = {};
    for (const port of names) ports[port] = await freePort();
    const child = spawn(command, args(ports), { env: env(ports), stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    let serving = false;
    let settle;
    const outcome = new Promise((resolve) => {
      settle = resolve;
    });
    const append = (chunk) => {
      log = (log + chunk).slice(-1_000_000);
      if (!serving && ready.test(log)) {
        serving = true;
        settle("ready");
      }
    };
    child.stdout.on("data", append);
    child.stderr.on("data", append);
    child.once("exit", () => settle("exited"));
    const timer = setTimeout(() => settle("late"), READY_WITHIN_MS);
    const result = await outcome;
    clearTimeout(timer);
    if (result === "ready") return { child, ports, log: () => log };
    child.kill("SIGKILL");
    if (result === "exited" && attempt < ATTEMPTS && /address already in use/.test(log)) continue;
    const why = result === "late" ? `did not say it was serving within ${READY_WITHIN_MS / 1000} s` : "exited";
    throw new Error(`${name} ${why} (attempt ${attempt}):\n${log}`);
  }
}

/** What the OpenTelemetry Collector logs once every component runs. */
export const COLLECTOR_READY = /Everything is ready/;

/**
 * A server of the VictoriaMetrics family (VictoriaMetrics, vmagent, VictoriaLogs) as startServer
 * starts it: on a free port (`http`), its flags from `args(port)`, serving once it says so.
 */
export function victoriaServer({ name, command, args, env }) {
  return {
    name,
    command,
    ports: ["http"],
    args: ({ http }) => args(http),
    ...(env === undefined ? {} : { env }),
    ready: /started server at http:/,
  };
}

/**
 * Prometheus (2.x or 3) as startServer starts it: `dir`/prometheus.yml its configuration, its
 * data in `dataDir` (default `dir`/data), on a free port (`web`), serving once it says so.
 */
export function prometheusServer({ name = "Prometheus", command, dir, dataDir = join(dir, "data"), flags = [], env }) {
  return {
    name,
    command,
    ports: ["web"],
    args: ({ web }) => [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${dataDir}`,
      `--web.listen-address=127.0.0.1:${web}`,
      ...flags,
    ],
    ...(env === undefined ? {} : { env }),
    ready: /Server is ready to receive web requests/,
  };
}
