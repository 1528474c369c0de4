/** Option values shared by commands: durations and seeds, checked with messages a user can act on. */
import { formatDuration, OTLP_TIME_END_MS, parseDuration } from "@gpusynth/blueprint";
import { DEFAULT_OTLP_PROTOCOL, OTLP_GRPC_PORT } from "@gpusynth/emit";
import { UsageError } from "../usage.js";

const DAY_MS = 86_400_000;
/**
 * The longest run: ten years of simulated time. A decade of the lab blueprint takes minutes
 * offline, the busiest blueprints hours; `calibrate` measures at most a year. Longer is a typo.
 */
export const MAX_RUN_DURATION_MS = 3_660 * DAY_MS;
/** Shortest scrape/export interval: finer than any real scrape (Prometheus' floor is 1s by convention). */
export const MIN_INTERVAL_MS = 10;
/** Longest interval: a day. Node timers hold at most 2^31 − 1 ms (24.8 days); a day is far inside. */
export const MAX_INTERVAL_MS = DAY_MS;
/**
 * Fastest live pace: 1e9 simulated seconds a second is 31 years a second, far past what any
 * blueprint simulates (the run then goes as fast as the CPU allows and stays responsive); beyond
 * it the simulated clock would outrun the years a timestamp can hold within minutes.
 */
export const MAX_SPEED = 1_000_000_000;

/**
 * The one grammar of a number on the command line, for every option that takes one: decimal
 * digits, and where the option takes fractions an optional fraction and exponent (0.5, 1e9). No
 * sign, no hex, no spaces, no Infinity: what JavaScript's Number() would also read (0x10, " 16",
 * "") is refused everywhere.
 */
const DECIMAL = /^\d+(\.\d+)?([eE][+-]?\d+)?$/;
const INTEGER = /^\d+$/;

/** `text` read as a number in the one grammar, or undefined; with `integer`, digits only. */
export function decimalOption(text: string, integer = false): number | undefined {
  if (!(integer ? INTEGER : DECIMAL).test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) && (!integer || Number.isSafeInteger(value)) ? value : undefined;
}

export function durationOption(name: string, text: string | boolean | undefined, fallback: string): number {
  const value = typeof text === "string" ? text : fallback;
  return boundedDuration(`--${name}`, value, 1, MAX_RUN_DURATION_MS, "90m, 24h or 7d");
}

/** Longest warm-up, as the blueprint's time.liveWarmup allows: a month of the largest blueprint is minutes of CPU. */
const MAX_WARMUP_MS = 30 * DAY_MS;

/** --warmup: simulated time run before a live run serves (0 for a cold start); the blueprint's time.liveWarmup when absent. */
export function warmupOption(text: string | boolean | undefined): number | undefined {
  if (typeof text !== "string") return undefined;
  if (text.trim() === "0") return 0;
  return boundedDuration("--warmup", text, 0, MAX_WARMUP_MS, "0, 6h or 1d");
}

/** A duration within [minMs, maxMs]; `name` is the flag the text came from. */
export function boundedDuration(name: string, text: string, minMs: number, maxMs: number, examples: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < minMs || ms > maxMs) {
    const range =
      minMs <= 1
        ? `a positive duration of at most ${formatDuration(maxMs)}`
        : `a duration from ${formatDuration(minMs)} to ${formatDuration(maxMs)}`;
    const found = text.length > 60 ? `${text.slice(0, 57)}...` : text;
    throw new UsageError(`${name}: expected ${range} such as ${examples}, found "${found}"`);
  }
  return ms;
}

/**
 * The scrape/export interval: --interval, else OTEL_METRIC_EXPORT_INTERVAL (integer
 * milliseconds, as the OpenTelemetry SDK reads it), else 15s; 10ms to 24h.
 */
export function intervalOption(text: string | boolean | undefined, env: NodeJS.ProcessEnv): number {
  if (typeof text === "string") return boundedDuration("--interval", text, MIN_INTERVAL_MS, MAX_INTERVAL_MS, "15s or 1m");
  const fromEnv = env.OTEL_METRIC_EXPORT_INTERVAL;
  if (fromEnv === undefined) return 15_000;
  const ms = Number(fromEnv);
  if (!/^\d+$/.test(fromEnv) || ms < MIN_INTERVAL_MS || ms > MAX_INTERVAL_MS) {
    throw new UsageError(
      `OTEL_METRIC_EXPORT_INTERVAL: expected milliseconds as an integer from ${MIN_INTERVAL_MS} to ${MAX_INTERVAL_MS} (24h), found "${fromEnv}"`,
    );
  }
  return ms;
}

/** --speed: simulated seconds per wall-clock second, positive and at most MAX_SPEED. */
export function speedOption(text: string | boolean | undefined): number {
  const value = typeof text === "string" ? text : "1";
  const speed = decimalOption(value);
  if (speed === undefined || speed <= 0 || speed > MAX_SPEED) {
    throw new UsageError(`--speed: expected a positive number of at most ${MAX_SPEED}, found "${value}"`);
  }
  return speed;
}

/**
 * An offline run stamps points with simulated time, which OTLP consumers hold in int64
 * nanoseconds: the run must end by 2262-04-11 (OTLP_TIME_END_MS).
 */
export function checkOfflineEnd(startMs: number, durationMs: number): void {
  if (startMs + durationMs <= OTLP_TIME_END_MS) return;
  const end = new Date(startMs + durationMs).toISOString();
  throw new UsageError(
    `--duration: expected a run that ends by ${new Date(OTLP_TIME_END_MS).toISOString()} (OTLP timestamps are int64 nanoseconds since 1970 in the OpenTelemetry Collector), found ${formatDuration(durationMs)} from time.start ${new Date(startMs).toISOString()}, ending ${end}`,
  );
}

/** The variables that name an OTLP endpoint, most specific first (OpenTelemetry's order). */
const ENDPOINT_VARIABLES = {
  metrics: ["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"],
  logs: ["OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"],
} as const;

/**
 * The OTLP endpoint(s) a push goes to, each with where it was given: --otlp-endpoint when given,
 * else the variable each signal reads (its own, else OTEL_EXPORTER_OTLP_ENDPOINT).
 */
function namedEndpoints(flag: string | undefined, env: NodeJS.ProcessEnv, signals: readonly ("metrics" | "logs")[]): [string, string][] {
  if (flag !== undefined) return [["--otlp-endpoint", flag]];
  return signals.flatMap((signal) => {
    const name = ENDPOINT_VARIABLES[signal].find((variable) => (env[variable] ?? "").trim() !== "");
    return name === undefined ? [] : [[name, env[name] as string] as [string, string]];
  });
}

/**
 * Checks the OTLP endpoint(s) a live run will push to (namedEndpoints). Each must be an http:// or
 * https:// URL with a host and a port from 1 to 65535 (the OpenTelemetry SDK would otherwise
 * throw, or with gRPC retry a host that cannot exist, forever).
 */
export function checkOtlpEndpoints(flag: string | undefined, env: NodeJS.ProcessEnv, signals: readonly ("metrics" | "logs")[]): void {
  for (const [name, value] of namedEndpoints(flag, env, signals)) checkEndpoint(name, value);
}

/**
 * A warning for a push whose protocol nobody chose, to an endpoint on OTLP/gRPC's port: the
 * default is OTLP/HTTP (DEFAULT_OTLP_PROTOCOL), which a gRPC receiver refuses, so the run would
 * report every request undelivered. gpusynth's own default was gRPC until 2026-12-06, and such
 * endpoints are in many set-ups. The endpoints were checked (checkOtlpEndpoints).
 */
export function grpcPortWarning(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  signals: readonly ("metrics" | "logs")[],
): string | undefined {
  const onGrpcPort = namedEndpoints(flag, env, signals).find(([, url]) => new URL(url).port === OTLP_GRPC_PORT);
  if (onGrpcPort === undefined) return undefined;
  const [name, url] = onGrpcPort;
  return `gpusynth: warning: ${name} ${url} is on port ${OTLP_GRPC_PORT}, OTLP/gRPC's, and no protocol is set, so the push is OTLP/HTTP (${DEFAULT_OTLP_PROTOCOL}, the specification's default); for a gRPC receiver set OTEL_EXPORTER_OTLP_PROTOCOL=grpc or --otlp-protocol grpc\n`;
}

function checkEndpoint(name: string, value: string): void {
  const expected = "an http:// or https:// URL such as http://localhost:4318";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    const port = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(value)?.[1];
    if (port !== undefined && Number(port) > 65_535) {
      throw new UsageError(`${name}: expected ${expected} with a port from 1 to 65535, found port ${port} in "${value}"`);
    }
    throw new UsageError(`${name}: expected ${expected}, found "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`${name}: expected ${expected}, found "${value}" (scheme "${url.protocol.slice(0, -1)}")`);
  }
  if (url.hostname === "") throw new UsageError(`${name}: expected ${expected}, found "${value}" (no host)`);
  if (url.port === "0") throw new UsageError(`${name}: expected ${expected} with a port from 1 to 65535, found port 0 in "${value}"`);
}

export function seedOption(text: string | boolean | undefined): number | undefined {
  if (typeof text !== "string") return undefined;
  const seed = decimalOption(text, true);
  if (seed === undefined || seed > 0xffff_ffff) throw new UsageError(`--seed: expected an integer from 0 to 4294967295, found "${text}"`);
  return seed;
}

export function oneBlueprint(positionals: readonly string[], fallback: string): string {
  if (positionals.length > 1) throw new UsageError(`expected at most one blueprint, found ${positionals.length}: ${positionals.join(" ")}`);
  return positionals[0] ?? fallback;
}
