/**
 * A real server process for tests (Prometheus, VictoriaLogs, vmagent, the collector) on free
 * loopback ports, known to be up by its own log rather than by what answers on its port.
 *
 * A free port is only free when it is chosen: with many servers starting at once (the suite's
 * files side by side, the lab check beside them) another process may bind it first — and may
 * even answer a readiness probe there, so a probe alone can take someone else's server for this
 * one. The server then exits "address already in use"; it is started again on other ports, up to
 * three times.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServerSpec<P extends string> {
  /** How failures name it. */
  readonly name: string;
  readonly binary: string;
  /** The ports it needs, each a free loopback port. */
  readonly ports: readonly P[];
  readonly args: (ports: Readonly<Record<P, number>>) => readonly string[];
  /** The environment, given the ports (the collector reads its endpoints from it). */
  readonly env?: (ports: Readonly<Record<P, number>>) => NodeJS.ProcessEnv;
  /** What its own log (stdout and stderr) says once it serves on its ports. */
  readonly ready: RegExp;
}

export interface ServerProcess<P extends string> {
  readonly child: ChildProcess;
  readonly ports: Readonly<Record<P, number>>;
  /** What it has written to stdout and stderr, its last megabyte. */
  log(): string;
}

const ATTEMPTS = 3;
const READY_WITHIN_MS = 30_000;
const LOG_KEPT = 1_000_000;

/** Starts the server and resolves once it says it is serving; rejects, with its log, when it cannot. */
export async function startServerProcess<P extends string>(spec: ServerSpec<P>): Promise<ServerProcess<P>> {
  for (let attempt = 1; ; attempt++) {
    const ports = {} as Record<P, number>;
    for (const name of spec.ports) ports[name] = await freePort();
    const child = spawn(spec.binary, spec.args(ports), {
      env: spec.env?.(ports) ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let serving = false;
    let settle: (outcome: "ready" | "exited" | "late") => void = () => {};
    const outcome = new Promise<"ready" | "exited" | "late">((resolve) => {
      settle = resolve;
    });
    // Read to the end whatever it writes, while it runs: a full pipe would stop it.
    const append = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-LOG_KEPT);
      if (!serving && spec.ready.test(output)) {
        serving = true;
        settle("ready");
      }
    };
    child.stdout?.on("data", append);
    child.stderr?.on("data", append);
    child.once("exit", () => settle("exited"));
    const timer = setTimeout(() => settle("late"), READY_WITHIN_MS);
    const result = await outcome;
    clearTimeout(timer);
    if (result === "ready") return { child, ports, log: () => output };
    child.kill("SIGKILL");
    if (result === "exited" && attempt < ATTEMPTS && /address already in use/.test(output)) continue;
    const why = result === "late" ? `did not say it was serving within ${READY_WITHIN_MS / 1000} s` : "exited";
    throw new Error(`${spec.name} ${why} (attempt ${attempt}):\n${output}`);
  }
}
