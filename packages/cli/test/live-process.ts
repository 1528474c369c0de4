/**
 * A `gpusynth run` live process as a user starts it (no shell in between, so SIGINT reaches it),
 * with what the tests need: its stderr, its stdout (the `--json` report), the scrape server's
 * address, and a timed stop.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { type Receiver, receivedPoints, receivedRecords } from "../../emit/test/otlp-receiver.js";
import type { DeliveryJson } from "../src/commands/otlp-push.js";
import { cpuMsOf, queuedMsOf } from "./proc-times.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const bin = join(root, "packages/cli/bin/gpusynth.js");

export interface LiveProcess {
  readonly child: ChildProcess;
  stderr(): string;
  stdout(): string;
  /** Resolves with the first match of `pattern` in stderr; rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** The scrape server's base URL, once announced. */
  scrapeUrl(): Promise<string>;
  /** Resolves when the process exits, with its code and how long after `since` (ms). */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /**
   * Sends `signal` and resolves with the exit code, the milliseconds it took, and how many of them
   * the process's main thread spent waiting for a CPU that other processes held (`queuedMs`, from
   * /proc/<pid>/schedstat; 0 where there is none). A stop bounded in `ms - queuedMs` (expectStoppedWithin) holds on a
   * loaded machine, where CI runs the lab beside the suite.
   */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number; queuedMs: number }>;
  /**
   * The CPU time the process has used so far, ms (all its threads: /proc/<pid>/stat's utime and
   * stime, in ticks of 10 ms); undefined where there is no /proc or the process has gone.
   */
  cpuMs(): number | undefined;
  /**
   * How long the process's main thread has waited for a CPU that other processes held, ms
   * (/proc/<pid>/schedstat); undefined where there is no /proc or the process has gone.
   */
  queuedMs(): number | undefined;
}

export function startLive(args: readonly string[], env: Record<string, string> = {}): LiveProcess {
  const child = spawn(process.execPath, [bin, "run", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  const listeners = new Set<() => void>();
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
    for (const listener of listeners) listener();
  });
  // Once its output is read to the end too ("close", not "exit"): the --json report is its last word.
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const waitFor = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(stderr);
        if (match === null) return false;
        listeners.delete(check);
        clearTimeout(timer);
        resolve(match);
        return true;
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`no ${pattern} in stderr after ${timeoutMs} ms:\n${stderr}`));
      }, timeoutMs);
      if (!check()) listeners.add(check);
      void exit.then(() => setTimeout(() => check() || reject(new Error(`exited without ${pattern}:\n${stderr}`)), 50));
    });
  return {
    child,
    stderr: () => stderr,
    stdout: () => stdout,
    waitFor,
    scrapeUrl: async () => (await waitFor(/scrape targets listed at (http:\/\/\S+?)\/sd/))[1] as string,
    exited: () => exit,
    stop: async (signal = "SIGINT") => {
      const sent = Date.now();
      // Sampled until it exits (its /proc entry goes with it): the last sample counts.
      const queuedFrom = queuedMsOf(child.pid) ?? 0;
      let queued = queuedFrom;
      const sample = setInterval(() => {
        queued = queuedMsOf(child.pid) ?? queued;
      }, 20);
      child.kill(signal);
      const { code, at } = await exit;
      clearInterval(sample);
      return { code, ms: at - sent, queuedMs: queued - queuedFrom };
    },
    cpuMs: () => cpuMsOf(child.pid),
    queuedMs: () => queuedMsOf(child.pid),
  };
}

/**
 * Expects a stop (LiveProcess.stop) to have taken at most `limitMs`, less the time the run's main
 * thread waited for a CPU that other processes held.
 */
export function expectStoppedWithin(stopped: { readonly ms: number; readonly queuedMs: number }, limitMs: number): void {
  const { ms, queuedMs } = stopped;
  expect(ms - queuedMs, `ms to stop (${queuedMs} of ${ms} waiting for a CPU)`).toBeLessThanOrEqual(limitMs);
}

/** Kills the process if a test left it running. */
export function ensureStopped(live: LiveProcess | undefined): void {
  if (live !== undefined && live.child.exitCode === null && live.child.signalCode === null) live.child.kill("SIGKILL");
}

/**
 * What became of one signal's data, from the report a run with `--json` prints on stdout at its
 * end; `total` is what it queued, and nothing is lost when none was dropped, refused or left.
 */
export function deliveryReport(stdout: string, signal: "metrics" | "logs") {
  const delivery = (JSON.parse(stdout) as { delivery?: Partial<Record<string, DeliveryJson>> }).delivery?.[signal];
  if (delivery === undefined) throw new Error(`no OTLP ${signal} delivery in the --json report:\n${stdout}`);
  return { ...delivery, total: delivery.queued, nothingLost: delivery.dropped + delivery.refused + delivery.undelivered === 0 };
}

/**
 * A run that ended with exit 0 and a receiver that got every point and log record the run's own
 * report counts, nothing lost; the two reports.
 */
export async function expectEverythingDelivered(run: LiveProcess, receiver: Receiver) {
  const { code } = await run.exited();
  expect(code, run.stderr()).toBe(0);
  const metrics = deliveryReport(run.stdout(), "metrics");
  const logs = deliveryReport(run.stdout(), "logs");
  expect(metrics.nothingLost && logs.nothingLost, run.stderr()).toBe(true);
  expect(receivedRecords(receiver)).toBe(logs.total);
  expect(receivedPoints(receiver)).toBe(metrics.total);
  return { metrics, logs };
}

/** Every scrape job a cluster's run serves, sorted: Run:ai's, dcgm-exporter, kube-state-metrics and the scheduler's. */
export const CLUSTER_JOBS = [
  "kai-scheduler-default",
  "kube-state-metrics",
  "kubelet",
  "metrics-exporter",
  "nvidia-dcgm-exporter",
  "queue-controller",
];

/**
 * An OTLP receiver that is down: every connection to its port is closed as it arrives. The port
 * stays taken until `close`, so no server another test starts meanwhile can take it (a port found
 * free and let go could be).
 */
export async function downReceiver(): Promise<{ readonly url: string; close(): void }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}
