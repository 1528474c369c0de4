/**
 * A real Prometheus server for tests (the Debian package; .ci/run installs it): started on a free
 * port with its own temporary data directory, scraping gpusynth through HTTP service discovery,
 * and always cleaned up — the process is killed and the directory removed on stop() and, should a
 * test runner die first, on process exit.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prometheusServer, startServer } from "../../../scripts/local-servers.mjs";
import { goServerEnv } from "./go-server-env.js";

export const which = (binary: string) => spawnSync("sh", ["-c", `command -v ${binary}`], { encoding: "utf8" }).stdout.trim();

export const prometheusBinary = which("prometheus");
if (prometheusBinary === "" && process.env.CI === "true")
  throw new Error("CI must provide a Prometheus server: .ci/run installs the Debian package");

export interface InstantSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

export interface RangeSeries {
  readonly metric: Record<string, string>;
  readonly values: ReadonlyArray<[number, string]>;
}

/** A free port, as the scripts that start servers pick one. */
export { freePort } from "../../../scripts/local-servers.mjs";

/**
 * A server process a test started, with its data directory: `stop` ends it as a user would
 * (SIGTERM, SIGKILL after 5 s) and removes the directory; should the test runner exit first,
 * both happen then.
 */
export function ownedProcess(child: ChildProcess, dir: string): { stop(): Promise<void> } {
  const cleanup = () => {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", cleanup);
  return {
    async stop() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      cleanup();
      process.removeListener("exit", cleanup);
    },
  };
}

export class PrometheusServer {
  private constructor(
    readonly api: string,
    private readonly owned: { stop(): Promise<void> },
  ) {}

  /** Starts Prometheus scraping every target the service-discovery URL lists. */
  static async start(sdUrl: string, scrapeInterval = "1s"): Promise<PrometheusServer> {
    return PrometheusServer.launch(
      [
        `global: { scrape_interval: ${scrapeInterval}, scrape_timeout: ${scrapeInterval} }`,
        "scrape_configs:",
        "  - job_name: gpusynth",
        `    http_sd_configs: [{ url: "${sdUrl}", refresh_interval: 1s }]`,
      ],
      [],
    );
  }

  /**
   * Starts Prometheus with the scrape jobs of a shipped config file (deploy/prometheus/), its
   * service-discovery URLs pointed at `sdUrl`.
   */
  static async startWithScrapeConfigs(file: string, sdUrl: string, scrapeInterval = "1s"): Promise<PrometheusServer> {
    const jobs = readFileSync(file, "utf8")
      .replaceAll(/url: http:\/\/\S+\/sd/g, `url: "${sdUrl}"`)
      .replaceAll("      - url:", "      - refresh_interval: 1s\n        url:");
    return PrometheusServer.launch([`global: { scrape_interval: ${scrapeInterval}, scrape_timeout: ${scrapeInterval} }`, jobs], []);
  }

  /** Starts Prometheus as a remote-write receiver only (at `<api>/api/v1/write`), scraping nothing. */
  static async startRemoteWriteReceiver(): Promise<PrometheusServer> {
    return PrometheusServer.launch(["global: { scrape_interval: 1m }"], ["--web.enable-remote-write-receiver"]);
  }

  /**
   * Starts a Prometheus 3 (`binary`: Debian's 2.x has no OTLP receiver) that takes OTLP at
   * `<api>/api/v1/otlp/v1/metrics` and scrapes nothing; names and labels are kept as the
   * exporters write them (UnderscoreEscapingWithoutSuffixes: signals/name-fidelity.md, path 5).
   */
  static async startOtlpReceiver(binary: string): Promise<PrometheusServer> {
    return PrometheusServer.launch(
      ["global: { scrape_interval: 1m }", "otlp: { translation_strategy: UnderscoreEscapingWithoutSuffixes }"],
      ["--web.enable-otlp-receiver"],
      binary,
    );
  }

  private static async launch(config: readonly string[], flags: readonly string[], binary = prometheusBinary): Promise<PrometheusServer> {
    const dir = mkdtempSync(join(tmpdir(), "gpusynth-prometheus-"));
    writeFileSync(join(dir, "prometheus.yml"), config.join("\n"));
    try {
      const { child, ports } = await startServer(prometheusServer({ command: binary, dir, flags, env: () => goServerEnv() }));
      return new PrometheusServer(`http://127.0.0.1:${ports.web}`, ownedProcess(child, dir));
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  async get(path: string): Promise<unknown> {
    const response = await fetch(`${this.api}${path}`);
    const body = (await response.json()) as { status: string; data: unknown };
    if (body.status !== "success") throw new Error(`${path}: ${JSON.stringify(body)}`);
    return body.data;
  }

  /** An instant query, at `atMs` (Unix ms) or now. */
  async query(promql: string, atMs?: number): Promise<InstantSample[]> {
    const at = atMs === undefined ? "" : `&time=${atMs / 1000}`;
    const data = (await this.get(`/api/v1/query?query=${encodeURIComponent(promql)}${at}`)) as { result: InstantSample[] };
    return data.result;
  }

  async queryRange(promql: string, startMs: number, endMs: number, stepSeconds: number): Promise<RangeSeries[]> {
    const data = (await this.get(
      `/api/v1/query_range?query=${encodeURIComponent(promql)}&start=${startMs / 1000}&end=${endMs / 1000}&step=${stepSeconds}`,
    )) as { result: RangeSeries[] };
    return data.result;
  }

  /**
   * Waits until every target is up; returns that instant (Unix seconds), where a query sees every
   * target's samples even if a later scrape on a loaded machine times out and marks them stale.
   */
  async waitForTargets(targets: number, timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const up = await this.query("up");
        if (up.length === targets && up.every((r) => r.value[1] === "1")) return up[0]?.value[0] as number;
      } catch {}
      if (Date.now() > deadline) throw new Error(`Prometheus did not scrape ${targets} targets within ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  stop(): Promise<void> {
    return this.owned.stop();
  }
}
