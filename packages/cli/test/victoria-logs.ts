/**
 * A real log backend for tests: VictoriaLogs, built from its module by scripts/build-tools.sh,
 * started on a free port with its own data directory, taking OTLP/HTTP logs at
 * /insert/opentelemetry/v1/logs and answering LogsQL at /select/logsql/query. Always cleaned up.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, victoriaServer } from "../../../scripts/local-servers.mjs";
import { goServerEnv } from "../../emit/test/go-server-env.js";
import { ownedProcess } from "../../emit/test/prometheus-server.js";
import { builtTool } from "./built-tools.js";

export const victoriaLogsBinary = builtTool("victorialogs");

export class VictoriaLogs {
  private constructor(
    readonly url: string,
    private readonly owned: { stop(): Promise<void> },
  ) {}

  static async start(): Promise<VictoriaLogs> {
    const dir = mkdtempSync(join(tmpdir(), "gpusynth-victorialogs-"));
    try {
      const { child, ports } = await startServer(
        victoriaServer({
          name: "VictoriaLogs",
          command: victoriaLogsBinary,
          args: (port) => [`-httpListenAddr=127.0.0.1:${port}`, `-storageDataPath=${dir}`],
          env: () => goServerEnv(),
        }),
      );
      return new VictoriaLogs(`http://127.0.0.1:${ports.http}`, ownedProcess(child, dir));
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** The OTLP/HTTP base a collector's otlphttp exporter is given (it appends /v1/logs). */
  get otlpEndpoint(): string {
    return `${this.url}/insert/opentelemetry`;
  }

  /** The rows a LogsQL query returns (every stored field of each record), over all time. */
  async query(logsql: string, limit = 100_000): Promise<Array<Record<string, string>>> {
    await fetch(`${this.url}/internal/force_flush`);
    const response = await fetch(`${this.url}/select/logsql/query`, {
      method: "POST",
      body: new URLSearchParams({ query: logsql, limit: String(limit) }),
    });
    if (!response.ok) throw new Error(`VictoriaLogs: ${response.status} ${await response.text()}`);
    return (await response.text())
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, string>);
  }

  /** How many records a LogsQL filter matches, over all time. */
  async count(filter: string): Promise<number> {
    const [row] = await this.query(`${filter} | stats count() records`);
    return Number(row?.records ?? 0);
  }

  /** The names of every field its records carry, over all time. */
  async fieldNames(): Promise<string[]> {
    await fetch(`${this.url}/internal/force_flush`);
    const response = await fetch(`${this.url}/select/logsql/field_names`, { method: "POST", body: new URLSearchParams({ query: "*" }) });
    const body = (await response.json()) as { values: Array<{ value: string }> };
    return body.values.map((v) => v.value);
  }

  stop(): Promise<void> {
    return this.owned.stop();
  }
}
