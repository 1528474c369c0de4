/**
 * VictoriaMetrics' binaries for the tests that send gpusynth's OTLP to a real receiver: Debian
 * trixie's package, unpacked into .cache/victoria-metrics by scripts/fetch-trixie.sh
 * (which .ci/run runs); GPUSYNTH_VICTORIA_METRICS_BIN names another folder of its binaries.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const folder = process.env.GPUSYNTH_VICTORIA_METRICS_BIN ?? join(root, ".cache/victoria-metrics/usr/bin");

/** The path of a VictoriaMetrics binary ("victoria-metrics", "vmagent"), or "" where it is missing (CI must have it). */
export function victoriaMetricsBinary(name: string): string {
  const path = join(folder, name);
  if (existsSync(path)) return path;
  if (process.env.CI === "true") throw new Error(`CI must provide ${name}: .ci/run fetches it into ${folder}`);
  return "";
}
