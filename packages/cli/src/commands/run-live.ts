/**
 * `gpusynth run` live: servers, OTLP delivery, the status line and a prompt, bounded shutdown.
 */

import { type Blueprint, formatDuration } from "@gpusynth/blueprint";
import {
  type ApiCredentials,
  ConsoleLogsSink,
  ControlPlaneServer,
  fanOutLogs,
  fanOutMetrics,
  type LiveStatus,
  type LogsSink,
  type MetricsSink,
  OtlpJsonLinesLogsSink,
  OtlpJsonLinesSink,
  PodLogFiles,
  type RunSelection,
  runLive,
  runSelection,
  ScrapeServer,
  SD_PATH,
} from "@gpusynth/emit";
import type { Output } from "../output.js";
import { OutputFile } from "../output-file.js";
import { backlogNote, Progress } from "../progress.js";
import { EXIT_OK, UsageError } from "../usage.js";
import { count, createDeliveries, type Deliveries, type DeliveriesJson, type OtlpTarget, reportDeliveries } from "./otlp-push.js";
import type { PodLogsOption } from "./run.js";

export interface LiveRun extends RunSelection {
  readonly api: ({ host: string; port: number; generated: boolean } & ApiCredentials) | undefined;
  readonly speed: number;
  /** Simulated ms before serving. */
  readonly warmupMs: number;
  /** Wall-clock ms. */
  readonly intervalMs: number;
  readonly durationMs?: number;
  readonly listen: { host: string; port: number } | undefined;
  readonly otlp: OtlpTarget | undefined;
  readonly explicitUrl: string | undefined;
  readonly logs: "otlp" | "console" | "none";
  /** Print the closing report as JSON on stdout (--json). */
  readonly json: boolean;
  /** Also write every scrape as OTLP-JSON lines here, stamped as pushed (beside the push and the scrape server). */
  readonly otlpJson?: string;
  /** Also write the log records as OTLP-JSON lines here. */
  readonly otlpJsonLogs?: string;
  /** Also write the containers' log files as a node keeps them. */
  readonly podLogs?: PodLogsOption;
}

/** A stopping run gets this long, signal to exit; past it the run exits anyway (the flush is shorter). */
const SHUTDOWN_DEADLINE_MS = 2000;

export async function runLiveCommand(
  blueprint: Blueprint,
  output: Output,
  run: LiveRun,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const otlp = run.otlp;
  // A scrape's metrics may wait for room in the queue for half the interval: the other half is the
  // logs', the report's and the simulation's, so the next scrape is on time.
  const deliveries =
    otlp === undefined ? undefined : createDeliveries(otlp, run.explicitUrl, run.logs === "otlp", output, env, false, run.intervalMs / 2);
  // Files written beside the push: each becomes final when the run ends (at --duration or on Ctrl-C).
  const metricsFile = run.otlpJson === undefined ? undefined : OutputFile.open("otlp-json", run.otlpJson);
  const logsFile = run.otlpJsonLogs === undefined ? undefined : OutputFile.open("otlp-json-logs", run.otlpJsonLogs);
  const metricsSinks: MetricsSink[] = [
    ...(deliveries === undefined ? [] : [deliveries.metrics]),
    ...(metricsFile === undefined ? [] : [new OtlpJsonLinesSink(metricsFile.writeLine)]),
  ];
  const logsSinks: LogsSink[] = [
    ...(run.logs === "console" ? [new ConsoleLogsSink(output.out)] : deliveries?.logs === undefined ? [] : [deliveries.logs]),
    ...(logsFile === undefined ? [] : [new OtlpJsonLinesLogsSink(logsFile.writeLine)]),
    ...(run.podLogs === undefined ? [] : [new PodLogFiles(run.podLogs.dir, run.podLogs.rotation)]),
  ];
  const sink = metricsSinks.length === 0 ? undefined : fanOutMetrics(...metricsSinks);
  const logs = logsSinks.length === 0 ? undefined : fanOutLogs(...logsSinks);
  const server = run.listen === undefined ? undefined : new ScrapeServer();
  const api = run.api === undefined ? undefined : new ControlPlaneServer(run.api);
  const abort = new AbortController();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    if (abort.signal.aborted) {
      // A second Ctrl-C: the user does not want to wait for the flush.
      output.err("\ngpusynth: stopped at once (second signal); queued OTLP data is lost\n");
      process.exit(EXIT_INTERRUPTED);
    }
    output.err(`\ngpusynth: stopping (Ctrl-C again to quit at once)\n`);
    deliveries?.metrics.hurry();
    deliveries?.logs?.hurry();
    abort.abort();
    // Scrapers and API clients are cut off now; whatever they hold open must not delay the exit.
    stopping = Promise.all([server?.close(), api?.close()]).then(() => {});
    // The flush is bounded well inside this; the timer only guards against the unforeseen.
    setTimeout(() => {
      output.err("gpusynth: shutdown took over 2s; exiting\n");
      process.exit(EXIT_OK);
    }, SHUTDOWN_DEADLINE_MS).unref();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    if (api !== undefined && run.api !== undefined) {
      const address = await listenOn("api", api, run.api);
      output.err(`gpusynth: Run:ai control-plane API (2.24) at ${baseUrl(address)}/api/v1\n`);
      if (run.api.generated) output.err(`gpusynth: API bearer token (set GPUSYNTH_API_TOKEN to choose one): ${run.api.token}\n`);
    }
    if (server !== undefined && run.listen !== undefined) {
      const address = await listenOn("listen", server, run.listen);
      output.err(
        `gpusynth: "${blueprint.cluster.name}" live at ×${run.speed}; scrape targets listed at ${baseUrl(address)}${SD_PATH} (Prometheus http_sd_configs)\n`,
      );
    }
    if (otlp !== undefined)
      output.err(`gpusynth: pushing OTLP (${otlp.protocol}) to ${otlp.url} every ${formatDuration(run.intervalMs)}\n`);
    if (
      server === undefined &&
      otlp === undefined &&
      api === undefined &&
      metricsFile === undefined &&
      logsFile === undefined &&
      run.podLogs === undefined
    )
      output.err("gpusynth: no --listen, no --api, no OTLP endpoint, no --otlp-json and no --pod-logs: the run emits nothing\n");
    if (run.podLogs !== undefined) output.err(`gpusynth: writing the pod log files under ${run.podLogs.dir}\n`);
    if ((run.workers ?? 1) > 1)
      output.err(`gpusynth: ${run.workers} worker threads emit the metrics, each a shard (docs/emission.md, "Shards")\n`);
    if (run.warmupMs > 0)
      output.err(
        `gpusynth: warming up: simulating ${formatDuration(run.warmupMs)}${run.speed === 1 ? " or more (to the real time of day)" : ""} before serving\n`,
      );
    let lastLine = Number.NEGATIVE_INFINITY;
    let toldBehind = false;
    let warmupProgress: Progress | undefined;
    /** More than a frame's worth of simulated time behind: the CPU cannot follow --speed. */
    const behind = (s: LiveStatus) => s.behindMs > run.intervalMs * run.speed;
    const status = await runLive(blueprint, {
      speed: run.speed,
      warmupMs: run.warmupMs,
      intervalMs: run.intervalMs,
      ...(run.durationMs === undefined ? {} : { durationMs: run.durationMs }),
      ...runSelection(run),
      ...(sink === undefined ? {} : { sink }),
      ...(server === undefined ? {} : { server }),
      ...(logs === undefined ? {} : { logs }),
      ...(api === undefined ? {} : { api: { server: api, retentionMs: blueprint.controlPlane.retention } }),
      signal: abort.signal,
      onWarmup: (reached, total, pending) => {
        warmupProgress ??= new Progress(output, "warm-up", total);
        warmupProgress.update(reached, () => backlogNote(pending));
      },
      onTick: (s) => {
        warmupProgress?.finish();
        warmupProgress = undefined;
        if (behind(s) && !toldBehind) {
          toldBehind = true;
          output.err(
            `${output.interactive ? "\n" : ""}gpusynth: the simulation cannot keep up with --speed ${run.speed}: ${behindText(s)} simulated behind the wall clock; serving what it has\n`,
          );
        }
        const line = statusLine(blueprint, s, deliveries);
        if (output.interactive) output.err(`\r${line}\u001b[K`);
        else if (performance.now() - lastLine > 60_000) {
          lastLine = performance.now();
          output.err(`${line}\n`);
        }
      },
    });
    if (output.interactive) output.err("\n");
    output.err(
      `gpusynth: stopped at ${formatStamp(status.stampedMs)}, the cluster's ${formatSimulated(blueprint, status.simulatedMs)}${behind(status) ? `, ${behindText(status)} simulated behind the wall clock` : ""}\n`,
    );
    const delivery = deliveries === undefined ? undefined : reportDeliveries(output, deliveries);
    if (api !== undefined) output.err(`gpusynth: API requests answered: ${answeredLine(api.answered)}\n`);
    for (const [file, path] of [
      [metricsFile, run.otlpJson],
      [logsFile, run.otlpJsonLogs],
    ] as const) {
      file?.commit();
      if (file !== undefined) output.err(`gpusynth: wrote ${path}\n`);
    }
    if (run.json) output.out(`${JSON.stringify(liveReport(blueprint, status, delivery), null, 2)}\n`);
    return EXIT_OK;
  } finally {
    metricsFile?.discard();
    logsFile?.discard();
    process.removeListener("SIGINT", stop);
    process.removeListener("SIGTERM", stop);
    await (stopping ?? Promise.all([server?.close(), api?.close()]));
    // Everything is reported; requests the SDK's transports still hold towards a dead or silent
    // endpoint (their retry timers, sockets) must not keep the process alive for their timeout.
    setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  }
}

/** Time for buffered output after the run's last line, before handles left open are cut. */
const EXIT_GRACE_MS = 100;

/** Exit status after a second interrupt, as shells report a process ended by SIGINT (128 + 2). */
const EXIT_INTERRUPTED = 130;

async function listenOn(
  flag: string,
  server: { listen(host: string, port: number): Promise<{ address: string; port: number }> },
  at: { host: string; port: number },
): Promise<{ address: string; port: number }> {
  try {
    return await server.listen(at.host, at.port);
  } catch (cause) {
    throw new UsageError(`--${flag}: cannot listen on ${at.host}:${at.port}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}`);
  }
}

function baseUrl(address: { address: string; port: number }): string {
  return `http://${address.address.includes(":") ? `[${address.address}]` : address.address}:${address.port}`;
}

function answeredLine(answered: ReadonlyMap<number, number>): string {
  if (answered.size === 0) return "none";
  return [...answered]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${n} × ${status}`)
    .join(", ");
}

/**
 * A live run's closing report as data (`--json`): where it stopped, on the consumers' clock and
 * in simulated time, how far behind the wall clock it was, and what became of its OTLP push.
 */
function liveReport(blueprint: Blueprint, status: LiveStatus, delivery: DeliveriesJson | undefined) {
  return {
    blueprint: blueprint.cluster.name,
    stoppedAt: new Date(status.stampedMs).toISOString(),
    simulatedMs: status.simulatedMs,
    behindMs: status.behindMs,
    ...(delivery === undefined ? {} : { delivery }),
  };
}

/** A Unix time as the status line prints it: UTC to the second. */
function formatStamp(unixMs: number): string {
  return `${new Date(unixMs).toISOString().slice(0, 19).replace("T", " ")}Z`;
}

/** Where the simulation is on the blueprint's calendar, for a person comparing with the blueprint. */
function formatSimulated(blueprint: Blueprint, simulatedMs: number): string {
  const shown = Math.round(simulatedMs / 1000) * 1000;
  return `${new Date(blueprint.time.start + simulatedMs).toISOString().slice(0, 16).replace("T", " ")} (+${formatDuration(shown)} simulated)`;
}

function statusLine(blueprint: Blueprint, s: LiveStatus, deliveries: Deliveries | undefined): string {
  const metrics = deliveries?.metrics.stats();
  const otlp =
    metrics === undefined
      ? ""
      : ` | OTLP ${count(metrics.delivered.items, "points")} sent, ${metrics.pending.requests} requests queued${metrics.outageSinceMs === undefined ? "" : " (receiver down)"}`;
  const behind = s.behindMs > 0 ? ` (${behindText(s)} behind)` : "";
  return `${formatStamp(s.stampedMs)} | ${s.running} running, ${s.pending} pending | ${s.targets} targets${otlp} | blueprint calendar ${formatSimulated(blueprint, s.simulatedMs)}${behind}`;
}

/** How far a run is behind the wall clock, to the second. */
function behindText(s: LiveStatus): string {
  return formatDuration(Math.round(s.behindMs / 1000) * 1000);
}
