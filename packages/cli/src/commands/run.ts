import { randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import { BEARER_TOKEN, type Blueprint, formatDuration, formatProblem, loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type LogSources, MAX_SHARD_GPUS, type Shard, shardGpus, WHOLE_RUN } from "@gpusynth/constructs";
import {
  type ApiCredentials,
  ConsoleLogsSink,
  type ContainerLogRotation,
  DEFAULT_OTLP_PROTOCOL,
  emitOffline,
  endpointFromEnv,
  fanOutLogs,
  fanOutMetrics,
  isOtlpProtocol,
  KUBELET_LOG_ROTATION,
  type LogsSink,
  type MetricsSink,
  OTLP_PROTOCOLS,
  OtlpJsonLinesLogsSink,
  OtlpJsonLinesSink,
  PodLogFiles,
  protocolFromEnv,
  type RunSelection,
  runSelection,
  SD_PATH,
  workerShards,
} from "@gpusynth/emit";
import { type Simulation, SummaryCollector } from "@gpusynth/sim";
import { checkCost } from "../cost-limit.js";
import type { Output } from "../output.js";
import { OutputFile, sameFile } from "../output-file.js";
import { parseCommand } from "../parse.js";
import { backlogNote, Progress } from "../progress.js";
import { DEFAULT_BLUEPRINT } from "../repo-paths.js";
import { summaryJson, summaryText } from "../summary-table.js";
import { EXIT_OK, UsageError } from "../usage.js";
import {
  boundedDuration,
  checkOfflineEnd,
  checkOtlpEndpoints,
  decimalOption,
  durationOption,
  grpcPortWarning,
  intervalOption,
  oneBlueprint,
  seedOption,
  speedOption,
  warmupOption,
} from "./options.js";
import { createDeliveries, type DeliveriesJson, type OtlpTarget, reportDeliveries } from "./otlp-push.js";
import { runLiveCommand } from "./run-live.js";

export const runHelp = `Usage: gpusynth run [options] [blueprint]

Runs the simulated cluster a blueprint describes and emits its telemetry as an OpenTelemetry
Collector's prometheus receiver would after scraping the real exporters (Run:ai, dcgm-exporter,
kube-state-metrics, the kubelet and its cAdvisor, node-exporter where the blueprint's
telemetry.nodeExporter deploys it, the scheduler), each scrape with the receiver's up and sample
counts; through the cluster's ServiceMonitors, with the labels kube-prometheus' rules select on,
where its telemetry.serviceMonitors says so.

Live (the default): a warm-up is simulated first (--warmup; default: the blueprint's
time.liveWarmup, 1d unless it says otherwise), so the first scrape shows a working cluster;
then the simulation is paced to the wall clock (--speed to accelerate). Every emulated target is served for scraping on --listen, each at its own path in the
vendor's text format, with a Prometheus HTTP service-discovery endpoint listing them all; when an
OTLP endpoint is configured (--otlp-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT) metrics are also
pushed through the OpenTelemetry SDK every --interval, and so are the logs (Kubernetes events and
the scheduler's log). With --api it also serves the Run:ai control-plane API (2.24: Metrics,
Telemetry, clusters, node pools, nodes, projects, departments, workloads and pods) from the same
simulated cluster, behind a bearer token. Runs until Ctrl-C, or for --duration.
One clock: everything a live run emits is on the consumers' wall clock. The moment serving
starts is now; at --speed N a simulated hour takes 60/N wall minutes, and every time emitted
(sample times, kube_pod_start_time and other time-valued series, log records, the API's times)
is the wall-clock moment its simulated instant maps to — the warm-up lies in the past. At ×1 the
warm-up is lengthened so the simulated time of day is the real one (UTC): the blueprint's
diurnal arrivals follow the real day. --interval and --duration are wall-clock time.

Offline (--offline): runs as fast as the CPU allows on the blueprint's own calendar (from
time.start; --interval and --duration are simulated time), and can write OTLP-JSON (--otlp-json)
and print per-project and per-node-pool totals (--summary). With an OTLP endpoint it pushes every
scrape and log record there, stamped on that calendar, at the pace the receiver takes them: the
run waits for room in its queue instead of dropping (a backfill of, say, Prometheus 3's OTLP
receiver); while the receiver is down it goes on, within the queue's bound, and reports the rest.

Arguments:
  blueprint              YAML file (default: blueprints/lab.yaml)

Options:
  --offline              run in simulated time, as fast as possible
  --duration <d>         how long to run, e.g. 90m, 24h, 7d; at most 3660d (offline: simulated, default 24h;
                         live: wall-clock, default until stopped)
  --speed <n>            live: simulated seconds per wall-clock second, at most 1e9 (default: 1)
  --warmup <d>           live: simulated time run before serving, at most 30d; 0 for a cold start
                         (default: the blueprint's time.liveWarmup, else 1d)
  --interval <d>         scrape/export interval, 10ms to 24h (default: OTEL_METRIC_EXPORT_INTERVAL ms, else 15s)
  --listen <host:port>   live: serve the scrape targets and ${SD_PATH} here (default: 127.0.0.1:9464; "none" to disable)
  --api <host:port>      live: serve the Run:ai control-plane API here, e.g. 127.0.0.1:8080 (default: none)
  --otlp-endpoint <url>  push OTLP here (default: OTEL_EXPORTER_OTLP_ENDPOINT; unset means no push)
  --otlp-protocol <p>    ${OTLP_PROTOCOLS.join(", ")} (default: OTEL_EXPORTER_OTLP_PROTOCOL, else ${DEFAULT_OTLP_PROTOCOL})
  --otlp-json <file>     write every scrape as an OTLP-JSON line to <file> (gzip when it ends in .gz); live,
                         beside the push and the scrape server, stamped as pushed
  --otlp-json-logs <f>   write the log records (Kubernetes events, scheduler log) as OTLP-JSON lines
                         (gzip when it ends in .gz); live too
  --pod-logs <dir>       write the container log files a node keeps in /var/log/pods (today the scheduler's)
                         under <dir>, in the CRI format, rotated as the kubelet rotates them, for a
                         collector's filelog receiver to tail; live too
  --container-log-max-size <q>
                         with --pod-logs: the kubelet's containerLogMaxSize, e.g. 10Mi (default), 512Ki
  --container-log-max-files <n>
                         with --pod-logs: the kubelet's containerLogMaxFiles, at least 2 (default 5)
  --container-log-monitor-interval <d>
                         with --pod-logs: the kubelet's containerLogMonitorInterval, how often it looks
                         at the files' sizes, at least 3s (default 10s)
  --logs <where>         otlp (the default with an OTLP endpoint), console, or none (otherwise the default)
  --log-sources <list>   which logs: events (Kubernetes events), scheduler (KAI's log), or events,scheduler (default)
  --scheduler-verbosity <n>
                         KAI's --v for its log, 0 to 10 (default: the blueprint's telemetry.schedulerVerbosity,
                         else 3): 1 keeps a cycle's start and end, 2 its actions, 3 every job's attempt
  --seed <n>             override the blueprint's seed (0 … 4294967295)
  --shard <i/n>          emit shard i of n (0-based): every shard simulates the whole cluster and emits
                         the per-node targets of nodes whose ordinal mod n is i; shard 0 also the
                         cluster-wide targets and the logs; the n shards together emit the whole run
  --workers <k>          worker threads emitting this process's part, each a shard of it, behind one
                         scrape server and one OTLP pipeline (default: one per 4,096 GPUs, up to the
                         cores, and at least enough that none emits over 16,384 GPUs)
  --summary              offline: print the summary table at the end
  --json                 print the run's report as JSON on stdout at its end: offline the summary (implies
                         --summary), live where it stopped; with an OTLP endpoint both say what became of
                         each signal's data (queued, delivered, requests, dropped, refused, undelivered)
  --no-cost-limit        run a blueprint whose estimated backlog (over 50,000 pending workloads) or CPU
                         time (over 30m) is refused otherwise; \`gpusynth validate\` prints the estimate
  -h, --help             show this help

Environment (standard OpenTelemetry variables):
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL,
  OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS, OTEL_METRIC_EXPORT_INTERVAL,
  OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_BLRP_MAX_EXPORT_BATCH_SIZE, OTEL_BLRP_MAX_QUEUE_SIZE
Environment (OTLP delivery; see docs/emission.md, "Delivery guarantees"):
  GPUSYNTH_OTLP_MAX_REQUEST_BYTES
                         largest OTLP request (default 4 MiB, a default collector's limit)
  GPUSYNTH_OTLP_QUEUE_BYTES
                         what a signal queues while the collector is down (default 64 MiB; the
                         oldest is dropped past it, and the run reports what it dropped)
Environment (control-plane API; each wins over the blueprint's controlPlane section):
  GPUSYNTH_API_TOKEN     the bearer token requests must carry (else the blueprint's, else a new
                         random one, printed at start)
  GPUSYNTH_API_CLIENT_ID, GPUSYNTH_API_CLIENT_SECRET
                         a service account that POST /api/v1/token and /api/v2/token accept

Examples:
  gpusynth run                                              # live; scrape http://127.0.0.1:9464${SD_PATH}
  OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 gpusynth run --speed 60
  GPUSYNTH_API_TOKEN=dev-token-0123456789 gpusynth run --api 127.0.0.1:8080 --speed 60
                                                            # then: curl -H 'Authorization: Bearer dev-token-0123456789' \\
                                                            #   'http://127.0.0.1:8080/api/v1/clusters'
  gpusynth run --offline --duration 24h --summary
  gpusynth run --offline --duration 1h --otlp-json metrics.jsonl blueprints/enterprise.yaml
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=http://localhost:9090/api/v1/otlp/v1/metrics OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \\
    gpusynth run --offline --duration 7d --logs none        # a week into Prometheus 3 (--web.enable-otlp-receiver)
`;

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export async function runCommand(args: readonly string[], output: Output, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseCommand(
    args,
    {
      offline: { type: "boolean" },
      duration: { type: "string" },
      speed: { type: "string" },
      warmup: { type: "string" },
      interval: { type: "string" },
      listen: { type: "string" },
      api: { type: "string" },
      "otlp-endpoint": { type: "string" },
      "otlp-protocol": { type: "string" },
      "otlp-json": { type: "string" },
      "otlp-json-logs": { type: "string" },
      "pod-logs": { type: "string" },
      "container-log-max-size": { type: "string" },
      "container-log-max-files": { type: "string" },
      "container-log-monitor-interval": { type: "string" },
      logs: { type: "string" },
      "log-sources": { type: "string" },
      "scheduler-verbosity": { type: "string" },
      seed: { type: "string" },
      shard: { type: "string" },
      workers: { type: "string" },
      summary: { type: "boolean" },
      json: { type: "boolean" },
      "no-cost-limit": { type: "boolean" },
    },
    "run",
  );
  const costLimited = values["no-cost-limit"] !== true;
  const seed = seedOption(values.seed);
  const shard = shardOption(values.shard);
  const intervalMs = intervalOption(values.interval, env);
  const otlpJson = typeof values["otlp-json"] === "string" ? values["otlp-json"] : undefined;
  const otlpJsonLogs = typeof values["otlp-json-logs"] === "string" ? values["otlp-json-logs"] : undefined;
  // Two writers of one file would interleave (or, renaming, lose one of the two).
  if (otlpJson !== undefined && otlpJsonLogs !== undefined && sameFile(otlpJson, otlpJsonLogs)) {
    throw new UsageError(`--otlp-json-logs: expected a file other than --otlp-json's, found the same file "${otlpJsonLogs}"`);
  }
  const podLogs = podLogsOption(values);
  // The OTLP push, live or offline: the flag, else the SDK's environment variables.
  const chosenProtocol = typeof values["otlp-protocol"] === "string" ? values["otlp-protocol"] : protocolFromEnv(env);
  const protocol = chosenProtocol ?? DEFAULT_OTLP_PROTOCOL;
  if (!isOtlpProtocol(protocol))
    throw new UsageError(
      `--otlp-protocol / OTEL_EXPORTER_OTLP_PROTOCOL: expected one of ${OTLP_PROTOCOLS.join(", ")}, found "${protocol}"`,
    );
  const endpoint = typeof values["otlp-endpoint"] === "string" ? values["otlp-endpoint"] : undefined;
  const pushing = endpoint !== undefined || endpointFromEnv(env) !== undefined;
  const logs = logsOption(values.logs, ["otlp", "console", "none"], pushing ? "otlp" : "none") as "otlp" | "console" | "none";
  if (pushing) {
    const signals = logs === "otlp" ? (["metrics", "logs"] as const) : (["metrics"] as const);
    checkOtlpEndpoints(endpoint, env, signals);
    const warning = chosenProtocol === undefined ? grpcPortWarning(endpoint, env, signals) : undefined;
    if (warning !== undefined) output.err(warning);
  } else if (logs === "otlp")
    throw new UsageError("--logs otlp needs an OTLP endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT or --otlp-endpoint");
  // The report is one JSON document on stdout: the console's log records would break it.
  if (values.json === true && logs === "console")
    throw new UsageError("--json: --logs console writes the log records to stdout, where the report goes; choose one");
  const otlp = pushing ? { protocol, url: endpoint ?? endpointFromEnv(env) ?? "" } : undefined;

  if (values.offline === true) {
    for (const flag of ["speed", "warmup", "listen", "api"] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} applies to live runs; drop it or drop --offline`);
    }
    const durationMs = durationOption("duration", values.duration, "24h");
    const logSources = logSourcesOption(values["log-sources"], logs !== "none" || otlpJsonLogs !== undefined || podLogs !== undefined);
    const file = oneBlueprint(positionals, DEFAULT_BLUEPRINT);
    const blueprint = withVerbosity(loaded(file, output), values["scheduler-verbosity"]);
    checkOfflineEnd(blueprint.time.start, durationMs);
    // Usage first: the cost estimate simulates a while, and a --workers the blueprint rules out is known without it.
    const workers = workersFor(blueprint, file, shard, values.workers);
    checkOneEncoding(workers, pushing, otlpJson, "an offline run");
    checkCost(blueprint, file, durationMs, `${formatDuration(durationMs)} simulated`, seed, !costLimited);
    return runOffline(
      blueprint,
      output,
      {
        durationMs,
        intervalMs,
        ...runSelection({ seed, shard, logSources, workers }),
        otlpJson,
        otlpJsonLogs,
        podLogs,
        logs,
        otlp,
        explicitUrl: endpoint,
        summary: values.summary === true || values.json === true,
        json: values.json === true,
      },
      env,
    );
  }
  if (values.summary !== undefined) throw new UsageError("--summary applies to offline runs: add --offline");
  const speed = speedOption(values.speed);
  const warmupMs = warmupOption(values.warmup);
  const listen = typeof values.listen === "string" ? values.listen : "127.0.0.1:9464";
  const api = typeof values.api === "string" && values.api !== "none" ? parseListen("api", values.api, "127.0.0.1:8080") : undefined;
  const durationMs = values.duration === undefined ? undefined : durationOption("duration", values.duration, "24h");
  const logSources = logSourcesOption(values["log-sources"], logs !== "none" || otlpJsonLogs !== undefined || podLogs !== undefined);
  const file = oneBlueprint(positionals, DEFAULT_BLUEPRINT);
  const blueprint = withVerbosity(loaded(file, output), values["scheduler-verbosity"]);
  // The warm-up (at ×1 up to a day longer, to the real time of day) and a simulated day served:
  // beyond a day, a run at a --speed the CPU cannot follow falls behind and says so.
  const warmup = warmupMs ?? blueprint.time.liveWarmup;
  const liveWorkers = workersFor(blueprint, file, shard, values.workers);
  checkOneEncoding(liveWorkers, pushing, otlpJson, "a live run");
  checkCost(blueprint, file, warmup + DAY_MS, `the ${formatDuration(warmup)} warm-up and a simulated day served`, seed, !costLimited);
  return runLiveCommand(
    blueprint,
    output,
    {
      api: api === undefined ? undefined : { ...api, ...apiCredentials(blueprint, env) },
      speed,
      warmupMs: warmup,
      intervalMs,
      ...(durationMs === undefined ? {} : { durationMs }),
      ...runSelection({ seed, shard, logSources, workers: liveWorkers }),
      listen: listen === "none" ? undefined : parseListen("listen", listen, "127.0.0.1:9464"),
      ...(otlpJson === undefined ? {} : { otlpJson }),
      ...(otlpJsonLogs === undefined ? {} : { otlpJsonLogs }),
      ...(podLogs === undefined ? {} : { podLogs }),
      otlp,
      explicitUrl: endpoint,
      logs,
      json: values.json === true,
    },
    env,
  );
}

/** Worker threads encode each scrape once, in their sink's one wire format: a push and a file differ. */
function checkOneEncoding(workers: number, pushing: boolean, otlpJson: string | undefined, run: string): void {
  if (workers > 1 && pushing && otlpJson !== undefined)
    throw new UsageError(
      `--otlp-json: ${run} with ${workers} worker threads writes one encoding; drop --otlp-json or the OTLP endpoint, or use --workers 1`,
    );
}

/** Where --pod-logs writes, and the kubelet's rotation settings for it. */
export interface PodLogsOption {
  readonly dir: string;
  readonly rotation: ContainerLogRotation;
}

/** --pod-logs with the kubelet's --container-log-* rotation settings (refused without it). */
function podLogsOption(values: Record<string, string | boolean | (string | boolean)[] | undefined>): PodLogsOption | undefined {
  const dir = values["pod-logs"];
  const size = values["container-log-max-size"];
  const files = values["container-log-max-files"];
  const interval = values["container-log-monitor-interval"];
  if (typeof dir !== "string") {
    for (const [flag, value] of [
      ["container-log-max-size", size],
      ["container-log-max-files", files],
      ["container-log-monitor-interval", interval],
    ] as const)
      if (value !== undefined) throw new UsageError(`--${flag} applies to the files --pod-logs writes: add --pod-logs <dir>`);
    return undefined;
  }
  let rotation = KUBELET_LOG_ROTATION;
  if (typeof size === "string") {
    const bytes = quantityBytes(size);
    if (bytes === undefined || bytes < 1)
      throw new UsageError(`--container-log-max-size: expected a size such as 10Mi, 512Ki or 1000000, found "${size}"`);
    rotation = { ...rotation, maxSizeBytes: bytes };
  }
  if (typeof files === "string") {
    const n = decimalOption(files, true);
    // NewContainerLogManager refuses maxFiles <= 1 (kubelet v1.30.2 container_log_manager.go).
    if (n === undefined || n < 2 || n > 1000)
      throw new UsageError(`--container-log-max-files: expected an integer from 2 to 1000 (the kubelet refuses fewer), found "${files}"`);
    rotation = { ...rotation, maxFiles: n };
  }
  // The kubelet's validation: containerLogMonitorInterval of at least 3 s (validation.go, v1.30.2).
  if (typeof interval === "string")
    rotation = {
      ...rotation,
      monitorIntervalMs: boundedDuration("--container-log-monitor-interval", interval, 3_000, DAY_MS, "3s, 10s or 1m"),
    };
  return { dir, rotation };
}

/** A Kubernetes quantity of bytes as containerLogMaxSize takes it: 10Mi, 512Ki, 2G, 1000000. */
function quantityBytes(text: string): number | undefined {
  const match = /^(\d+)(Ki|Mi|Gi|k|M|G)?$/.exec(text.trim());
  if (match === null) return undefined;
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, k: 1e3, M: 1e6, G: 1e9 }[match[2] ?? ""] ?? 1;
  const bytes = Number(match[1]) * unit;
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** --log-sources: events, scheduler, or both; refused where no log goes anywhere (it would do nothing). */
function logSourcesOption(text: string | boolean | undefined, logsGoSomewhere: boolean): LogSources | undefined {
  if (typeof text !== "string") return undefined;
  const names = text.split(",").map((name) => name.trim());
  const unknown = names.find((name) => name !== "events" && name !== "scheduler");
  if (unknown !== undefined) throw new UsageError(`--log-sources: expected events, scheduler or events,scheduler, found "${text}"`);
  if (!logsGoSomewhere)
    throw new UsageError("--log-sources: no log goes anywhere in this run; add --logs console (or otlp, or --otlp-json-logs offline)");
  return { events: names.includes("events"), scheduler: names.includes("scheduler") };
}

/** --scheduler-verbosity overrides the blueprint's telemetry.schedulerVerbosity (KAI's --v). */
function withVerbosity(blueprint: Blueprint, text: string | boolean | undefined): Blueprint {
  if (typeof text !== "string") return blueprint;
  const verbosity = decimalOption(text, true);
  if (verbosity === undefined || verbosity > 10)
    throw new UsageError(`--scheduler-verbosity: expected an integer from 0 to 10, found "${text}"`);
  return { ...blueprint, telemetry: { ...blueprint.telemetry, schedulerVerbosity: verbosity } };
}

/** The blueprint named on the command line, loaded after the flags are checked (a bad flag fails fast). */
function loaded(file: string, output: Output): Blueprint {
  const { blueprint, warnings } = loadBlueprint(file);
  for (const warning of warnings) output.err(`${formatProblem(warning, file)}\n`);
  return blueprint;
}

function parseListen(flag: string, text: string, example: string): { host: string; port: number } {
  const match = /^(.*):(\d+)$/.exec(text);
  const port = Number(match?.[2]);
  if (match === null || port > 65_535) throw new UsageError(`--${flag}: expected host:port such as ${example}, or none, found "${text}"`);
  return { host: (match[1] as string).replace(/^\[|\]$/g, "") || "127.0.0.1", port };
}

/** The API's credentials: the environment's, else the blueprint's; a token is generated when neither has one. */
function apiCredentials(blueprint: Blueprint, env: NodeJS.ProcessEnv): ApiCredentials & { generated: boolean } {
  const fromEnv = env.GPUSYNTH_API_TOKEN;
  if (fromEnv !== undefined && !BEARER_TOKEN.test(fromEnv))
    throw new UsageError("GPUSYNTH_API_TOKEN: expected a bearer token of at least 16 characters (letters, digits, -._~+/)");
  const token = fromEnv ?? blueprint.controlPlane.token;
  const id = env.GPUSYNTH_API_CLIENT_ID ?? blueprint.controlPlane.serviceAccount?.clientId;
  const secret = env.GPUSYNTH_API_CLIENT_SECRET ?? blueprint.controlPlane.serviceAccount?.clientSecret;
  if ((id === undefined) !== (secret === undefined))
    throw new UsageError("GPUSYNTH_API_CLIENT_ID and GPUSYNTH_API_CLIENT_SECRET: set both or neither");
  return {
    token: token ?? randomBytes(24).toString("base64url"),
    generated: token === undefined,
    ...(id === undefined || secret === undefined ? {} : { client: { id, secret } }),
  };
}

function logsOption(value: string | boolean | undefined, allowed: readonly string[], fallback: string): string {
  const where = typeof value === "string" ? value : fallback;
  if (!allowed.includes(where)) throw new UsageError(`--logs: expected ${allowed.join(", ")}, found "${where}"`);
  return where;
}

/** --shard i/n: shard i (0-based) of n. */
function shardOption(text: string | boolean | undefined): Shard | undefined {
  if (typeof text !== "string") return undefined;
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (match === null || count < 1 || count > 100_000 || index >= count)
    throw new UsageError(`--shard: expected i/n with 0 <= i < n <= 100000, e.g. 0/4, found "${text}"`);
  return { index, count };
}

/** GPUs below which a second worker costs more than it saves (each simulates the whole cluster). */
const GPUS_PER_WORKER = 4_096;

/**
 * --workers k: worker threads emitting the process's part of the run (workers/shard-workers.ts).
 * By default one per 4,096 GPUs the process emits, up to the machine's cores, and never fewer
 * than keep each worker within MAX_SHARD_GPUS; a k that leaves a worker over it is refused.
 */
function workersFor(blueprint: Blueprint, file: string, shard: Shard | undefined, text: string | boolean | undefined): number {
  const part = shard ?? WHOLE_RUN;
  const largest = (k: number) => Math.max(...workerShards(part, k).map((s) => shardGpus(blueprint.nodePools, s)));
  const total = shardGpus(blueprint.nodePools, part);
  let needed = 1;
  while (largest(needed) > MAX_SHARD_GPUS) needed++;
  if (typeof text !== "string") return Math.max(needed, Math.min(availableParallelism(), Math.ceil(total / GPUS_PER_WORKER)));
  const k = decimalOption(text, true);
  if (k === undefined || k < 1 || k > MAX_WORKERS)
    throw new UsageError(`--workers: expected an integer from 1 to ${MAX_WORKERS}, found "${text}"`);
  if (k < needed) {
    const part = shard === undefined ? "" : ` of shard ${shard.index}/${shard.count}`;
    throw new UsageError(
      `--workers ${k}: ${file} puts up to ${largest(k).toLocaleString("en-US")} GPUs${part} on one worker, and one emits at most ${MAX_SHARD_GPUS.toLocaleString("en-US")} (docs/emission.md, "Shards"): use --workers ${needed} or more, or more --shard processes`,
    );
  }
  return k;
}

/** Worker threads beyond this would each hold the whole simulation for a sliver of the work. */
const MAX_WORKERS = 256;

interface OfflineRun extends RunSelection {
  readonly durationMs: number;
  readonly intervalMs: number;
  readonly otlpJson: string | undefined;
  readonly otlpJsonLogs: string | undefined;
  readonly podLogs: PodLogsOption | undefined;
  readonly logs: "otlp" | "console" | "none";
  /** The OTLP push, paced by the receiver: every scrape and log record waits for room, none is dropped while it answers. */
  readonly otlp: OtlpTarget | undefined;
  readonly explicitUrl: string | undefined;
  readonly summary: boolean;
  readonly json: boolean;
}

async function runOffline(blueprint: Blueprint, output: Output, run: OfflineRun, env: NodeJS.ProcessEnv): Promise<number> {
  const progress = new Progress(output, `run ${blueprint.cluster.name}`, run.durationMs);
  let simulation: Simulation;
  const collector = SummaryCollector.forBlueprint(blueprint);
  const emitting =
    run.otlp !== undefined ||
    run.otlpJson !== undefined ||
    run.otlpJsonLogs !== undefined ||
    run.podLogs !== undefined ||
    run.logs !== "none";
  /** What became of the OTLP push, when there was one. */
  let delivery: DeliveriesJson | undefined;
  if (emitting) {
    const deliveries =
      run.otlp === undefined ? undefined : createDeliveries(run.otlp, run.explicitUrl, run.logs === "otlp", output, env, true);
    const metricsFile = run.otlpJson === undefined ? undefined : OutputFile.open("otlp-json", run.otlpJson);
    let logsFile: OutputFile | undefined;
    // Ctrl-C leaves no temporary file behind: remove them and end as the signal would have.
    const interrupted = (signal: NodeJS.Signals) => {
      metricsFile?.discard();
      logsFile?.discard();
      process.exit(128 + (signal === "SIGINT" ? 2 : 15));
    };
    process.once("SIGINT", interrupted);
    process.once("SIGTERM", interrupted);
    try {
      logsFile = run.otlpJsonLogs === undefined ? undefined : OutputFile.open("otlp-json-logs", run.otlpJsonLogs);
      const logsSinks: LogsSink[] = [
        ...(run.logs === "console" ? [new ConsoleLogsSink(output.out)] : deliveries?.logs === undefined ? [] : [deliveries.logs]),
        ...(logsFile === undefined ? [] : [new OtlpJsonLinesLogsSink(logsFile.writeLine)]),
        ...(run.podLogs === undefined ? [] : [new PodLogFiles(run.podLogs.dir, run.podLogs.rotation)]),
      ];
      const logs = logsSinks.length === 0 ? undefined : fanOutLogs(...logsSinks);
      const metricsSinks: MetricsSink[] = [
        ...(deliveries === undefined ? [] : [deliveries.metrics]),
        ...(metricsFile === undefined ? [] : [new OtlpJsonLinesSink(metricsFile.writeLine)]),
      ];
      const result = await emitOffline(blueprint, metricsSinks.length === 0 ? undefined : fanOutMetrics(...metricsSinks), {
        durationMs: run.durationMs,
        intervalMs: run.intervalMs,
        ...runSelection(run),
        ...(logs === undefined ? {} : { logs }),
        observers: [collector.record],
        onScrape: (t, _, pending) => progress.update(t, () => backlogNote(pending)),
      });
      simulation = result.simulation;
      // Both files become final only when the whole run succeeded.
      metricsFile?.commit();
      logsFile?.commit();
      progress.finish();
      if (run.otlpJson !== undefined) output.err(`wrote ${result.scrapes} scrapes (${result.points} points) to ${run.otlpJson}\n`);
      if (run.otlpJsonLogs !== undefined) output.err(`wrote ${result.logRecords} log records to ${run.otlpJsonLogs}\n`);
      if (run.podLogs !== undefined) output.err(`wrote the pod log files under ${run.podLogs.dir}\n`);
      // emitOffline shut the deliveries down (each flushes for up to its export timeout).
      if (deliveries !== undefined) delivery = reportDeliveries(output, deliveries);
    } finally {
      process.removeListener("SIGINT", interrupted);
      process.removeListener("SIGTERM", interrupted);
      metricsFile?.discard();
      logsFile?.discard();
    }
  } else {
    const cluster = new ClusterRun(blueprint, {
      ...(run.seed === undefined ? {} : { seed: run.seed }),
      metrics: false,
      readsGpus: false,
      observers: [collector.record],
    });
    // A frame an hour, so a long run can show where it is.
    drive(cluster, every(HOUR_MS, { toMs: run.durationMs, atEnd: true }), ({ simulatedMs: t, view }) =>
      progress.update(t, () => backlogNote(view.pending.length)),
    );
    simulation = cluster.simulation;
    progress.finish();
  }

  if (run.summary) {
    const view = simulation.view();
    const byProject = new Map<string, number>();
    const byPool = new Map<string, number>();
    for (const w of view.pending) {
      byProject.set(w.project, (byProject.get(w.project) ?? 0) + 1);
      const pool = w.nodePools[0] as string;
      byPool.set(pool, (byPool.get(pool) ?? 0) + 1);
    }
    const summary = collector.summary(simulation.now);
    const json = () => ({ ...summaryJson(summary, { byProject, byPool }), ...(delivery === undefined ? {} : { delivery }) });
    output.out(run.json ? `${JSON.stringify(json(), null, 2)}\n` : summaryText(summary, { byProject, byPool }));
  } else if (!emitting) {
    output.out(
      `simulated ${formatDuration(run.durationMs)} of "${blueprint.cluster.name}"; add --summary for the totals, --otlp-json FILE for the metrics, --logs console for the logs\n`,
    );
  }
  return EXIT_OK;
}
