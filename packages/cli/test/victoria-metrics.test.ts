/**
 * gpusynth's OTLP in a receiver someone else wrote: a live run pushes OTLP/HTTP protobuf into
 * VictoriaMetrics 1.112 (Debian trixie's package, fetched by scripts/fetch-trixie.sh),
 * once as it stores names by default and once with -opentelemetry.usePrometheusNaming. The names
 * it stored are compared with signals/name-fidelity.md: verbatim by default, and path 4
 * (Prometheus 3's default translation, which gpusynth derives from the translators' rules) with
 * Prometheus naming — so the derived column is checked against a real implementation.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { freePort, waitUntilUp } from "../../emit/test/prometheus-server.js";
import { startLive } from "./live-process.js";
import { victoriaMetricsBinary } from "./victoria-metrics.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const binary = victoriaMetricsBinary("victoria-metrics");

/** The metric names VictoriaMetrics stored from a short live run of gpu-fault.yaml. */
async function storedNames(flags: readonly string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-vm-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server: ChildProcess = spawn(binary, [`-httpListenAddr=127.0.0.1:${port}`, `-storageDataPath=${dir}`, ...flags], {
    stdio: "ignore",
  });
  try {
    await waitUntilUp(`${url}/health`);
    const live = startLive(
      [
        "--speed",
        "60",
        "--interval",
        "1s",
        "--duration",
        "3s",
        "--listen",
        "none",
        "--logs",
        "none",
        "--warmup",
        "0s",
        "blueprints/scenarios/gpu-fault.yaml",
      ],
      { OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf", OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${url}/opentelemetry/v1/metrics` },
    );
    const { code } = await live.exited();
    expect(code, live.stderr()).toBe(0);
    expect(live.stderr()).toMatch(/OTLP metrics: [\d,]+ of [\d,]+ points delivered .*; nothing lost/);
    // Freshly ingested samples become searchable after VictoriaMetrics flushes them (about a second).
    await fetch(`${url}/internal/force_flush`);
    const body = (await (await fetch(`${url}/api/v1/label/__name__/values`)).json()) as { data: string[] };
    return body.data.sort();
  } finally {
    server.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

/** signals/name-fidelity.md: each family's name on path 4 ("same": the vendor's name). */
function path4Names(): Map<string, string> {
  const rows = readFileSync(join(root, "signals/name-fidelity.md"), "utf8").matchAll(/^\| `([^`]+)` \| \w+ \|(.*)\|$/gm);
  const names = new Map<string, string>();
  for (const [, family, rest] of rows) {
    const cells = (rest as string).split("|").map((c) => c.trim());
    const path4 = cells[3] as string;
    names.set(family as string, path4 === "same" ? (family as string) : (/`([^`]+)`/.exec(path4)?.[1] as string));
  }
  return names;
}

describe.skipIf(binary === "")("gpusynth's OTLP stored by VictoriaMetrics 1.112", () => {
  let verbatim: string[] = [];
  let prometheusNamed: string[] = [];
  beforeAll(async () => {
    [verbatim, prometheusNamed] = await Promise.all([storedNames([]), storedNames(["-opentelemetry.usePrometheusNaming"])]);
  }, 60_000);

  it("keeps every family's vendor name by default", () => {
    const documented = path4Names();
    expect(verbatim.length).toBeGreaterThan(50);
    // Each stored name is a documented family's own name: nothing renamed, nothing invented.
    for (const name of verbatim) expect(documented.has(name), name).toBe(true);
    expect(verbatim).toContain("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  });

  it("stores with -opentelemetry.usePrometheusNaming exactly the names name-fidelity.md derives for Prometheus 3", () => {
    const names = path4Names();
    const expected = [...new Set(verbatim.map((name) => names.get(name) as string))].sort();
    expect(prometheusNamed).toEqual(expected);
    expect(prometheusNamed).toContain("kai_preemption_attempts_total");
  });
});
