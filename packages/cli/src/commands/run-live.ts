/**
 * `gpusynth run` live: servers, OTLP delivery, the status line and a prompt, bounded shutdown.
 */

import { type Blueprint, formatDuration } from "@gpusynth/blueprint";
import {
  type ApiCredentials,
  ConsoleLogsSink,
  ControlPlaneServer,
  createOtlpExporter,
  createOtlpLogExporter,
  ExporterSink,
  type LiveStatus,
  LogExporterSink,
  type LogsSink,
  type MetricsSink,
  type OTLP_PROTOCOLS,
  runLive,
  ScrapeServer,
  SD_PATH,
  signalUrl,
} from "@gpusynth/emit";
import type { Output } from "../output.js";
import { EXIT_OK, UsageError } from "../usage.js";

export interface LiveRun {
  readonly api: ({ host: string; port: number; generated: boolean } & ApiCredentials) | undefined;
  readonly speed: number;
  readonly intervalMs: number;
  readonly durationMs?: number;
  readonly seed?: number;
  readonly listen: { host: string; port: number } | undefined;
  readonly otlp: { protocol: (typeof OTLP_PROTOCOLS)[number]; url: string } | undefined;
  readonly explicitUrl: string | undefined;
  readonly logs: "otlp" | "console" | "none";
}

export async function runLiveCommand(blueprint: Blueprint, output: Output, run: LiveRun): Promise<number> {
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const server = run.listen === undefined ? undefined : new ScrapeServer();
  let warned = false;
  const sink: MetricsSink | undefined =
    run.otlp === undefined
      ? undefined
      : new ExporterSink(createOtlpExporter(run.otlp.protocol, signalUrl(run.explicitUrl, run.otlp.protocol, "metrics")), (error) => {
          if (warned) return;
          warned = true;
          output.err(
            `\nwarning: OTLP export to ${run.otlp?.url || "the configured endpoint"} failed (${error?.message ?? "unknown error"}); the run goes on and keeps retrying\n`,
          );
        });
  if (run.logs === "otlp" && run.otlp === undefined) {
    throw new UsageError("--logs otlp needs an OTLP endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT or --otlp-endpoint");
  }
  const logs: LogsSink | undefined =
    run.logs === "console"
      ? new ConsoleLogsSink(output.out)
      : run.logs === "otlp" && run.otlp !== undefined
        ? new LogExporterSink(createOtlpLogExporter(run.otlp.protocol, signalUrl(run.explicitUrl, run.otlp.protocol, "logs")), (error) => {
            output.err(`\nwarning: OTLP log export failed (${error?.message ?? "unknown error"}); the run goes on\n`);
          })
        : undefined;
  const api = run.api === undefined ? undefined : new ControlPlaneServer(run.api);
  try {
    if (api !== undefined && run.api !== undefined) {
      let address: { address: string; port: number };
      try {
        address = await api.listen(run.api.host, run.api.port);
      } catch (cause) {
        throw new UsageError(
          `--api: cannot listen on ${run.api.host}:${run.api.port}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}`,
        );
      }
      output.err(`gpusynth: Run:ai control-plane API (2.24) at ${baseUrl(address)}/api/v1\n`);
      if (run.api.generated) output.err(`gpusynth: API bearer token (set GPUSYNTH_API_TOKEN to choose one): ${run.api.token}\n`);
    }
    if (server !== undefined && run.listen !== undefined) {
      let address: { address: string; port: number };
      try {
        address = await server.listen(run.listen.host, run.listen.port);
      } catch (cause) {
        throw new UsageError(
          `--listen: cannot listen on ${run.listen.host}:${run.listen.port}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}`,
        );
      }
      output.err(
        `gpusynth: "${blueprint.cluster.name}" live at ×${run.speed}; scrape targets listed at ${baseUrl(address)}${SD_PATH} (Prometheus http_sd_configs)\n`,
      );
    }
    if (run.otlp !== undefined)
      output.err(`gpusynth: pushing OTLP (${run.otlp.protocol}) to ${run.otlp.url} every ${formatDuration(run.intervalMs)}\n`);
    if (server === undefined && run.otlp === undefined && api === undefined)
      output.err("gpusynth: no --listen, no --api and no OTLP endpoint: the run emits nothing\n");
    let lastLine = Number.NEGATIVE_INFINITY;
    const status = await runLive(blueprint, {
      speed: run.speed,
      intervalMs: run.intervalMs,
      ...(run.durationMs === undefined ? {} : { durationMs: run.durationMs }),
      ...(run.seed === undefined ? {} : { seed: run.seed }),
      ...(sink === undefined ? {} : { sink }),
      ...(server === undefined ? {} : { server }),
      ...(logs === undefined ? {} : { logs }),
      ...(api === undefined ? {} : { api: { server: api, retentionMs: blueprint.controlPlane.retention } }),
      signal: abort.signal,
      onTick: (s) => {
        if (output.interactive) output.err(`\r${statusLine(blueprint, s)}\u001b[K`);
        else if (performance.now() - lastLine > 60_000) {
          lastLine = performance.now();
          output.err(`${statusLine(blueprint, s)}\n`);
        }
      },
    });
    if (output.interactive) output.err("\n");
    output.err(`gpusynth: stopped after ${formatDuration(status.simulatedMs)} simulated\n`);
    if (status.failedScrapes > 0) output.err(`gpusynth: ${status.failedScrapes} target scrape(s) could not be delivered over OTLP\n`);
    if (status.failedLogRecords > 0) output.err(`gpusynth: ${status.failedLogRecords} log record(s) could not be delivered over OTLP\n`);
    if (api !== undefined) output.err(`gpusynth: API requests answered: ${answeredLine(api.answered)}\n`);
    return EXIT_OK;
  } finally {
    process.removeListener("SIGINT", stop);
    process.removeListener("SIGTERM", stop);
    await server?.close();
    await api?.close();
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

function statusLine(blueprint: Blueprint, s: LiveStatus): string {
  const at = new Date(blueprint.time.start + s.simulatedMs).toISOString().slice(0, 16).replace("T", " ");
  const otlp = s.exportedScrapes + s.failedScrapes > 0 ? ` | OTLP ${s.exportedScrapes} sent, ${s.failedScrapes} failed` : "";
  return `sim ${at} (+${formatDuration(s.simulatedMs)}) | ${s.running} running, ${s.pending} pending | ${s.targets} targets${otlp}`;
}
