/**
 * VictoriaMetrics' binaries for the tests that send gpusynth's OTLP to a real receiver: Debian
 * trixie's package, unpacked into .cache/victoria-metrics by scripts/fetch-trixie.sh
 * (which .ci/run runs); GPUSYNTH_VICTORIA_METRICS_BIN names another folder of its binaries.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, victoriaServer } from "../../../scripts/local-servers.mjs";
import { goServerEnv } from "../../emit/test/go-server-env.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const folder = process.env.GPUSYNTH_VICTORIA_METRICS_BIN ?? join(root, ".cache/victoria-metrics/usr/bin");

/** The path of a VictoriaMetrics binary ("victoria-metrics", "vmagent"), or "" where it is missing (CI must have it). */
export function victoriaMetricsBinary(name: string): string {
  const path = join(folder, name);
  if (existsSync(path)) return path;
  if (process.env.CI === "true") throw new Error(`CI must provide ${name}: .ci/run fetches it into ${folder}`);
  return "";
}

/**
 * A VictoriaMetrics binary (vmagent, the single-node server) on a free port, given by `flags`,
 * once its log says it serves there: its base URL and its process.
 */
export async function startVictoriaMetrics(
  binary: string,
  flags: (port: number) => readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; child: ChildProcess }> {
  const { child, ports } = await startServer(
    victoriaServer({ name: binary.split("/").at(-1) ?? binary, command: binary, args: flags, env: () => goServerEnv(env) }),
  );
  return { url: `http://127.0.0.1:${ports.http}`, child };
}

/**
 * vmagent's flags shared by the tests, beside its remote-write URLs: a flush every 500 ms, and one
 * queue, which keeps a series' samples in order (Prometheus 2.x refuses an older sample, a stale
 * marker included, after a newer one, and an offline run pushes minutes of samples within a second).
 */
export function vmagentFlags(port: number, tmpDataPath: string): string[] {
  return [
    `-httpListenAddr=127.0.0.1:${port}`,
    "-remoteWrite.flushInterval=500ms",
    "-remoteWrite.queues=1",
    `-remoteWrite.tmpDataPath=${tmpDataPath}`,
  ];
}

/** Families whose last sample marks a whole scrape: a per-node exporter's and kube-state-metrics'. */
const SCRAPE_PROBES = ["DCGM_FI_DEV_GPU_UTIL", "kube_node_labels"];

/**
 * Waits until vmagent has forwarded the scrape stamped `unixMs` into every store (Prometheus API
 * base URLs). It forwards in blocks, a target at a time: the scrape is all there once each store's
 * last sample of the probe families is stamped then, and the number of their series stamped then
 * is the same in every store and has not changed over a flush.
 */
export async function vmagentForwarded(stores: readonly string[], unixMs: number): Promise<void> {
  const value = async (store: string, promql: string) => {
    const response = await fetch(`${store}/api/v1/query?query=${encodeURIComponent(promql)}&time=${unixMs / 1000}`);
    const body = (await response.json()) as { data: { result: Array<{ value: [number, string] }> } };
    return Number(body.data.result[0]?.value[1] ?? 0);
  };
  const each = (promql: (family: string) => string) =>
    Promise.all(stores.flatMap((store) => SCRAPE_PROBES.map((family) => value(store, promql(family)))));
  let before = "";
  for (let i = 0; ; i++) {
    const stamps = await each((family) => `max(timestamp(${family}))`);
    const counts = await each((family) => `count(count_over_time(${family}[1s]))`);
    const perStore = SCRAPE_PROBES.length;
    const alike = counts.every((n, k) => n === counts[k % perStore]);
    if (stamps.every((t) => t * 1000 === unixMs) && alike && counts.join() === before) return;
    before = counts.join();
    // Generous: three pipelines forward at once beside the rest of the suite on two cores.
    if (i === 75) throw new Error(`vmagent did not forward the scrape stamped ${new Date(unixMs).toISOString()} within 45 s: ${before}`);
    await new Promise((resolve) => setTimeout(resolve, 600));
  }
}
