// Types of local-servers.mjs for the TypeScript tests that start servers too (packages/*/test).
import type { ChildProcess } from "node:child_process";

/** A loopback port nothing listens on now. */
export declare function freePort(): Promise<number>;

export declare function sleep(ms: number): Promise<void>;

export interface ServerSpec<P extends string> {
  /** How failures name it. */
  readonly name: string;
  readonly command: string;
  /** The ports it needs, each a free loopback port. */
  readonly ports: readonly P[];
  readonly args: (ports: Readonly<Record<P, number>>) => readonly string[];
  /** Its environment, given the ports (the whole environment: process.env when left out). */
  readonly env?: (ports: Readonly<Record<P, number>>) => NodeJS.ProcessEnv;
  /** What its own log (stdout and stderr) says once it serves on its ports. */
  readonly ready: RegExp;
}

export interface StartedServer<P extends string> {
  readonly child: ChildProcess;
  readonly ports: Readonly<Record<P, number>>;
  /** What it has written to stdout and stderr, its last megabyte. */
  log(): string;
}

/** Starts a server on free ports and resolves once its own log says it serves (local-servers.mjs). */
export declare function startServer<P extends string>(spec: ServerSpec<P>): Promise<StartedServer<P>>;

/** What the OpenTelemetry Collector logs once every component runs. */
export declare const COLLECTOR_READY: RegExp;

/** VictoriaMetrics, vmagent or VictoriaLogs as startServer starts it: port `http`, its flags from `args(port)`. */
export declare function victoriaServer(options: {
  readonly name: string;
  readonly command: string;
  readonly args: (port: number) => readonly string[];
  readonly env?: (ports: Readonly<Record<"http", number>>) => NodeJS.ProcessEnv;
}): ServerSpec<"http">;

/** Prometheus (2.x or 3) as startServer starts it: `dir`/prometheus.yml, data in `dataDir` (default `dir`/data), port `web`. */
export declare function prometheusServer(options: {
  readonly name?: string;
  readonly command: string;
  readonly dir: string;
  readonly dataDir?: string;
  readonly flags?: readonly string[];
  readonly env?: (ports: Readonly<Record<"web", number>>) => NodeJS.ProcessEnv;
}): ServerSpec<"web">;
