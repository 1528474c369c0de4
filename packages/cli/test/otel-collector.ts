/**
 * A real OpenTelemetry Collector for tests: the distribution of deploy/otelcol/builder.yaml
 * or the node agent's of deploy/otelcol-node (built by scripts/build-tools.sh), started with one or more configuration files — later ones
 * merged over earlier ones, as `otelcol --config a --config b` does — on free ports, its own
 * telemetry off (no fixed :8888 to collide on), and waited for until its log says it runs. Always
 * cleaned up: killed on stop() and, should a test runner die first, on process exit.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { COLLECTOR_READY, startServer } from "../../../scripts/local-servers.mjs";
import { goServerEnv } from "../../emit/test/go-server-env.js";
import { builtTool } from "./built-tools.js";

export const otelcolBinary = builtTool("otelcol");
/** The node agent's distribution (deploy/otelcol-node/builder.yaml): filelog and file_storage. */
export const otelcolNodeBinary = builtTool("otelcol-node");

/** The addresses a started collector listens on (host:port), also set as its environment. */
export interface CollectorEndpoints {
  readonly OTLP_GRPC_ENDPOINT: string;
  readonly OTLP_HTTP_ENDPOINT: string;
  readonly HEALTH_CHECK_ENDPOINT: string;
}

/** A collector configuration's reference to an environment variable, `${env:NAME}`. */
export const collectorVariable = (name: keyof CollectorEndpoints): string => `$\{env:${name}}`;

/** Settings every test collector gets, merged last: its own metrics off. */
const QUIET = "yaml:service::telemetry::metrics::level: none";

export class Collector {
  private constructor(
    readonly endpoints: CollectorEndpoints,
    private readonly child: ChildProcess,
    /** What the collector has written to stdout and stderr (the last megabyte). */
    readonly log: () => string,
  ) {}

  /**
   * Starts the collector with `configs` (files, or `yaml:` snippets as otelcol takes them) and
   * `env`, and resolves once its log says every component runs. The receivers' and health
   * check's endpoints are free loopback ports unless `endpoints` names them, passed as
   * OTLP_GRPC_ENDPOINT, OTLP_HTTP_ENDPOINT and HEALTH_CHECK_ENDPOINT (the variables
   * otel-collector.yaml reads). `binary` is the gateway's distribution unless said.
   */
  static async start(
    configs: readonly string[],
    env: Record<string, string> = {},
    preset: Partial<CollectorEndpoints> = {},
    binary = otelcolBinary,
  ): Promise<Collector> {
    const names = (["OTLP_GRPC_ENDPOINT", "OTLP_HTTP_ENDPOINT", "HEALTH_CHECK_ENDPOINT"] as const).filter((n) => preset[n] === undefined);
    const endpointsOf = (ports: Partial<Record<keyof CollectorEndpoints, number>>): CollectorEndpoints => ({
      OTLP_GRPC_ENDPOINT: preset.OTLP_GRPC_ENDPOINT ?? `127.0.0.1:${ports.OTLP_GRPC_ENDPOINT}`,
      OTLP_HTTP_ENDPOINT: preset.OTLP_HTTP_ENDPOINT ?? `127.0.0.1:${ports.OTLP_HTTP_ENDPOINT}`,
      HEALTH_CHECK_ENDPOINT: preset.HEALTH_CHECK_ENDPOINT ?? `127.0.0.1:${ports.HEALTH_CHECK_ENDPOINT}`,
    });
    const { child, ports, log } = await startServer({
      name: "the collector",
      command: binary,
      ports: names,
      args: () => [...configs, QUIET].flatMap((c) => ["--config", c]),
      env: (ports) => goServerEnv({ ...endpointsOf(ports), ...env }, { allThreads: true }),
      ready: COLLECTOR_READY,
    });
    const kill = () => child.kill("SIGKILL");
    process.once("exit", kill);
    child.once("exit", () => process.removeListener("exit", kill));
    return new Collector(endpointsOf(ports), child, log);
  }

  /** Stops it as a user would (SIGTERM: exporters flush), killing it after 10 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** `otelcol validate`: exit code and output for `configs` under `env`. */
export function validateCollectorConfig(configs: readonly string[], env: Record<string, string>): { code: number | null; output: string } {
  const result = spawnSync(otelcolBinary, ["validate", ...configs.flatMap((c) => ["--config", c])], {
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}
