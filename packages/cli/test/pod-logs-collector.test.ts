/**
 * gpusynth's pod log files read by a real node agent: the collector of deploy/otelcol-node with
 * the shipped otel-collector-node.yaml (the Helm chart's logsCollection preset: filelog with the
 * container operator, offsets in file_storage) sends what it reads to a real gateway collector,
 * which writes it to a file. Record by record, that equals gpusynth's own OTLP push of the same
 * run (--otlp-json-logs): body, time, severity, scope, every log and resource attribute. The
 * differences the file cannot close are the ones docs/emission.md ("Pod log files") names: the
 * path's directory, and the observed time (when the agent read the line).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { main } from "../src/main.js";
import { captureOutput } from "./helpers.js";
import { ensureStopped, type LiveProcess, startLive } from "./live-process.js";
import { Collector, collectorVariable, otelcolBinary, otelcolNodeBinary } from "./otel-collector.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const NODE_AGENT = join(root, "otel-collector-node.yaml");
const GATEWAY = join(root, "otel-collector.yaml");
const dir = mkdtempSync(join(tmpdir(), "gpusynth-node-agent-"));
let live: LiveProcess | undefined;
let collectors: Collector[] = [];
afterEach(async () => {
  ensureStopped(live);
  await Promise.all(collectors.map((c) => c.stop()));
  collectors = [];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface JsonRecord {
  timeUnixNano?: string;
  observedTimeUnixNano?: string;
  severityNumber?: number | string;
  severityText?: string;
  body?: { stringValue?: string };
  attributes?: Array<{ key: string; value: { stringValue?: string } }>;
}
interface LogsRequest {
  resourceLogs?: Array<{
    resource?: { attributes?: Array<{ key: string; value: { stringValue?: string } }> };
    scopeLogs?: Array<{ scope?: { name?: string; version?: string }; logRecords?: JsonRecord[] }>;
  }>;
}

/** Attributes by key, in code-unit order of their keys (the SDK and the collector order them differently). */
const attributes = (list: JsonRecord["attributes"]) =>
  Object.fromEntries(
    (list ?? []).map((a) => [a.key, a.value.stringValue]).sort(([a], [b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0)),
  ) as Record<string, string | undefined>;

/**
 * Every record of an OTLP-JSON lines file, as the comparison sees it: the file's directory taken
 * out of log.file.path (the push names the node's /var/log/pods), and of the observed time only
 * whether it is set. In time order (stable: a file's lines keep their order; a rotation splits
 * them at a time).
 */
function records(file: string, podLogsDir?: string) {
  if (!existsSync(file)) return [];
  const out = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line === "") continue;
    for (const rl of (JSON.parse(line) as LogsRequest).resourceLogs ?? [])
      for (const sl of rl.scopeLogs ?? [])
        for (const r of sl.logRecords ?? []) {
          const attrs = attributes(r.attributes);
          const path = attrs["log.file.path"];
          if (podLogsDir !== undefined && path !== undefined) attrs["log.file.path"] = path.replace(podLogsDir, "/var/log/pods");
          out.push({
            resource: attributes(rl.resource?.attributes),
            scope: `${sl.scope?.name ?? ""}@${sl.scope?.version ?? ""}`,
            timeUnixNano: r.timeUnixNano,
            observed: (r.observedTimeUnixNano ?? "0") !== "0",
            severity: `${r.severityNumber ?? 0}/${r.severityText ?? ""}`,
            body: r.body?.stringValue,
            attributes: attrs,
          });
        }
  }
  return out.sort((a, b) => Number(BigInt(a.timeUnixNano ?? "0") - BigInt(b.timeUnixNano ?? "0")));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records in an OTLP-JSON lines file, counted without parsing it (each has one time). */
function recordCount(file: string): number {
  if (!existsSync(file)) return 0;
  const text = readFileSync(file, "utf8");
  let n = 0;
  for (let at = text.indexOf('"timeUnixNano"'); at !== -1; at = text.indexOf('"timeUnixNano"', at + 1)) n++;
  return n;
}

/**
 * Waits until `count()` reaches `total`, or stays put for 15 s: on a loaded machine the agent,
 * restarted, may take seconds to find its files again and the gateway to write what it sent (a
 * clean-clone CI run gave up after 5 s with 4,174 of 4,806 records in).
 */
async function until(count: () => number, total: number): Promise<void> {
  let last = -1;
  let since = Date.now();
  while (count() < total && Date.now() - since < 15_000) {
    const now = count();
    if (now !== last) {
      last = now;
      since = Date.now();
    }
    await sleep(200);
  }
}

describe.skipIf(otelcolBinary === "" || otelcolNodeBinary === "")("gpusynth's pod log files through a real node agent", () => {
  /**
   * A gateway that writes what it receives to a file, and a node agent on `podLogs` sending to
   * it. The gateway passes the records through as they come, or, `pseudonymised`, is the shipped
   * otel-collector.yaml with its logs pipeline's exporters replaced by the file.
   */
  async function pipeline(name: string, pseudonymised = false) {
    const podLogs = join(dir, name, "pods");
    const checkpoints = join(dir, name, "otelcol");
    const received = join(dir, name, "received.jsonl");
    mkdirSync(podLogs, { recursive: true });
    mkdirSync(checkpoints, { recursive: true }); // file_storage needs it, as the chart's hostPath makes it
    const gatewayConfig = join(dir, name, "gateway.yaml");
    const file = { file: { path: received } };
    writeFileSync(
      gatewayConfig,
      stringify(
        pseudonymised
          ? { exporters: file, service: { pipelines: { logs: { exporters: ["file"] } } } }
          : {
              receivers: { otlp: { protocols: { grpc: { endpoint: collectorVariable("OTLP_GRPC_ENDPOINT") } } } },
              exporters: file,
              extensions: { health_check: { endpoint: collectorVariable("HEALTH_CHECK_ENDPOINT") } },
              service: { extensions: ["health_check"], pipelines: { logs: { receivers: ["otlp"], exporters: ["file"] } } },
            },
      ),
    );
    const gateway = pseudonymised
      ? await Collector.start([GATEWAY, gatewayConfig], {
          GPUSYNTH_PSEUDONYM_SALT: "a-test-salt-0123456789",
          // The metrics and the log backend's exporters are configured but receive nothing.
          PROMETHEUS_REMOTE_WRITE: "http://127.0.0.1:9/api/v1/write",
          LOGS_OTLP_ENDPOINT: "http://127.0.0.1:9",
        })
      : await Collector.start([gatewayConfig]);
    collectors.push(gateway);
    const agentEnv = { POD_LOGS_DIR: podLogs, CHECKPOINT_DIR: checkpoints, GATEWAY_OTLP_ENDPOINT: gateway.endpoints.OTLP_GRPC_ENDPOINT };
    const startAgent = async () => {
      const agent = await Collector.start([NODE_AGENT], agentEnv, {}, otelcolNodeBinary);
      collectors.push(agent);
      return agent;
    };
    return { podLogs, received, pushed: join(dir, name, "pushed.jsonl"), agent: await startAgent(), startAgent };
  }

  const run = (p: { podLogs: string; pushed: string }, ...args: string[]) =>
    startLive([
      ...args,
      "--interval",
      "1s",
      "--listen",
      "none",
      "--log-sources",
      "scheduler",
      "--otlp-json-logs",
      p.pushed,
      "--pod-logs",
      p.podLogs,
      "blueprints/lab.yaml",
    ]);

  /** The rotated files' names, oldest first. */
  const rotatedFiles = (podLogs: string) =>
    readdirSync(podLogs)
      .flatMap((pod) =>
        readdirSync(join(podLogs, pod)).flatMap((c) => readdirSync(join(podLogs, pod, c)).filter((n) => !n.endsWith(".log"))),
      )
      .sort();

  // Retried once: on a loaded 2-core machine (a `just check` with the static checks and the lab
  // beside the suite, a clean-clone CI run) two runs of five on 2026-12-07 lost one file's worth of
  // lines (848 of 4,800, 814 of 4,802) written around the agent's restart, long before the next
  // rotation; alone, and under three busy loops, it passed. The message says which lines, when.
  let attempts = 0;
  it("delivers what gpusynth pushes at --speed 600, across a rotation and a restart of the agent", {
    timeout: 90_000,
    retry: 1,
  }, async () => {
    attempts++;
    const p = await pipeline(`x600-${attempts}`);
    // The kubelet looks at the files every 30 s of the node's clock here (10 s by default): at
    // ×600 a file holds hours of the scheduler's lines by then, past the 32 KiB this run allows
    // even at KAI's --v=1 (a cycle's start and end; --v=3 at ×600 is megabytes a second, which
    // the ×1 run below covers line for line).
    live = run(
      p,
      ...["--speed", "600", "--scheduler-verbosity", "1", "--duration", "45s", "--container-log-max-size", "32Ki"],
      ...["--container-log-monitor-interval", "30s"],
    );
    while (rotatedFiles(p.podLogs).length === 0 && live.child.exitCode === null) await sleep(100);
    // Just after a rotation, the next is 30 s away: time enough, on a loaded machine too, for what
    // follows before it (20 s was not, once in a clean-clone CI run with the static checks and the
    // lab beside the suite: a file rotated while the agent was down is not found again, and the part
    // it had not read is lost, as with a real agent). Once the agent has read the rotated file to
    // its end (a renamed file is read on through the handle it holds, not found again after a
    // restart), it is stopped (its offsets kept in file_storage) and started again while
    // gpusynth goes on writing, and the run ends soon after.
    //
    // The agent must also have found the live file the rotation opened, and stored its offset: a
    // file it first meets after a restart is read from its end (start_at: end), so what was
    // written there before would be lost (a loaded suite run lost 1,046 of 4,808 lines that way).
    // So it is stopped once it has read every line of the container's files as they are now.
    //
    // And the agent must be up at the next rotation, 30 s of the records' clock after the last
    // (its file's name stamps it): where reading took so long on a loaded machine that too little
    // is left before it for the stop and the restart, the agent reads on across that rotation first.
    const pod = readdirSync(p.podLogs)[0] as string;
    const container = join(p.podLogs, pod, readdirSync(join(p.podLogs, pod))[0] as string);
    for (;;) {
      const files = readdirSync(container).filter((name) => !name.endsWith(".gz"));
      const written = files.reduce((lines, name) => lines + readFileSync(join(container, name), "utf8").split("\n").length - 1, 0);
      await until(() => recordCount(p.received), written);
      // Stopped before it has read the rotated file to its end, the agent would lose the rest.
      expect(recordCount(p.received)).toBeGreaterThanOrEqual(written);
      const stamp =
        rotatedFiles(p.podLogs)
          .at(-1)
          ?.match(/\.(\d{4})(\d\d)(\d\d)-(\d\d)(\d\d)(\d\d)$/)
          ?.slice(1)
          .map(Number) ?? [];
      const [year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0] = stamp;
      const nextRotation = Date.UTC(year, month - 1, day, hour, minute, second) + 30_000;
      if (Date.now() < nextRotation - 8_000 || live.child.exitCode !== null) break;
      const rotations = rotatedFiles(p.podLogs).length;
      while (rotatedFiles(p.podLogs).length === rotations && live.child.exitCode === null) await sleep(100);
    }
    const stoppedAt = Date.now();
    await p.agent.stop();
    await sleep(500);
    await p.startAgent();
    const restartedAt = Date.now();
    await sleep(1_500);
    const { code } = await live.stop("SIGINT");
    expect(code, live.stderr()).toBe(0);
    expect(rotatedFiles(p.podLogs)).not.toEqual([]);
    const pushed = records(p.pushed);
    expect(pushed.length).toBeGreaterThan(2_000);
    // zap's ISO8601 time (milliseconds) starts every line, at ×600 too.
    expect(pushed.filter((r) => !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\t/.test(r.body ?? "")).slice(0, 3)).toEqual([]);
    await until(() => recordCount(p.received), pushed.length);
    for (const c of collectors) await c.stop();
    const read = records(p.received, p.podLogs);
    // Which lines did not arrive, by their time, beside the agent's stop and restart.
    const arrived = new Set(read.map((r) => `${r.timeUnixNano}\u0000${r.body}`));
    const missing = pushed
      .filter((r) => !arrived.has(`${r.timeUnixNano}\u0000${r.body}`))
      .map((r) => Number(BigInt(r.timeUnixNano ?? "0") / 1_000_000n));
    const since = (ms: number | undefined) => (ms === undefined ? "-" : `${((ms - stoppedAt) / 1000).toFixed(1)} s`);
    expect(
      read.length,
      `${missing.length} lines missing, stamped from ${since(missing[0])} to ${since(missing.at(-1))} after the agent's stop (restarted after ${since(restartedAt)}); rotated: ${rotatedFiles(p.podLogs).join(", ")}`,
    ).toBe(pushed.length);
    // The first few that differ, beside the pushed record, then the whole.
    const differing = read.flatMap((r, i) => (JSON.stringify(r) === JSON.stringify(pushed[i]) ? [] : [{ read: r, pushed: pushed[i] }]));
    expect(differing.slice(0, 2)).toEqual([]);
    expect(read).toEqual(pushed);
  });

  it("delivers what gpusynth pushes at --speed 1", async () => {
    const p = await pipeline("x1");
    live = run(p, "--speed", "1", "--duration", "4s");
    const { code } = await live.exited();
    expect(code, live.stderr()).toBe(0);
    const pushed = records(p.pushed);
    expect(pushed.length).toBeGreaterThan(0);
    await until(() => recordCount(p.received), pushed.length);
    expect(records(p.received, p.podLogs)).toEqual(pushed);
  }, 60_000);

  it("leaves no blueprint name in clear behind the shipped gateway, where the files name workloads", async () => {
    const p = await pipeline("pseudonymised", true);
    live = run(p, "--speed", "60", "--duration", "3s");
    const { code } = await live.exited();
    expect(code, live.stderr()).toBe(0);
    await until(() => recordCount(p.received), records(p.pushed).length);
    expect(records(p.received).length).toBe(records(p.pushed).length);
    const leakcheck = async (file: string) => {
      const { output, text } = captureOutput();
      return { code: await main(["leakcheck", "--blueprint", join(root, "blueprints/lab.yaml"), "--otlp-json", file], output), ...text };
    };
    // The same lines in clear name the blueprint's workloads; through the gateway, none.
    expect((await leakcheck(p.pushed)).code).toBe(1);
    const behind = await leakcheck(p.received);
    expect(behind.code, behind.out).toBe(0);
  }, 60_000);
});
