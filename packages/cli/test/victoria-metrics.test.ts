/**
 * gpusynth's OTLP in a receiver someone else wrote: an offline run pushes OTLP/HTTP protobuf into
 * VictoriaMetrics 1.112 (Debian trixie's package, fetched by scripts/fetch-trixie.sh),
 * once as it stores names by default and once with -opentelemetry.usePrometheusNaming. The names
 * it stored are compared with what signals/receiver-names.json measured by sending each family
 * alone (scripts/measure-receiver-names.mjs): a whole run's names are the probes' names.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCRAPE_REPORT } from "@gpusynth/emit";
import { beforeAll, describe, expect, it } from "vitest";
import { readReceiverNames } from "../src/commands/fidelity.js";
import { calendarStart } from "./helpers.js";
import { deliveryReport, startLive } from "./live-process.js";
import { startVictoriaMetrics, victoriaMetricsBinary } from "./victoria-metrics.js";

const binary = victoriaMetricsBinary("victoria-metrics");
const SCENARIO = "blueprints/scenarios/gpu-fault.yaml";
const scenarioStart = calendarStart(SCENARIO);

/** The metric names VictoriaMetrics stored from gpu-fault.yaml's first three minutes, pushed offline. */
async function storedNames(flags: readonly string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-vm-"));
  let server: ChildProcess | undefined;
  try {
    // Its retention (one month by default) must reach back to the scenario's calendar.
    const started = await startVictoriaMetrics(binary, (port) => [
      `-httpListenAddr=127.0.0.1:${port}`,
      `-storageDataPath=${dir}`,
      "-retentionPeriod=100y",
      ...flags,
    ]);
    server = started.child;
    const url = started.url;
    // Offline, so that both stores get the same scrapes: a live run's frames depend on the wall
    // clock (a pod caught waiting in one run and not the other gave the two stores different names).
    const live = startLive(["--offline", "--duration", "3m", "--interval", "1m", "--logs", "none", "--json", SCENARIO], {
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${url}/opentelemetry/v1/metrics`,
    });
    const { code } = await live.exited();
    expect(code, live.stderr()).toBe(0);
    expect(deliveryReport(live.stdout(), "metrics").nothingLost, live.stderr()).toBe(true);
    // Freshly ingested samples become searchable after VictoriaMetrics flushes them (about a second).
    await fetch(`${url}/internal/force_flush`);
    // The scrapes are on the scenario's calendar: names seen in its first day (the API's default is the last day).
    const day = `start=${scenarioStart / 1000}&end=${scenarioStart / 1000 + 86_400}`;
    const body = (await (await fetch(`${url}/api/v1/label/__name__/values?${day}`)).json()) as { data: string[] };
    return body.data.sort();
  } finally {
    server?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The receiver's report on each scrape: gauges whose names no path changes. */
const REPORT = new Set<string>(Object.values(SCRAPE_REPORT).map((f) => f.name));

/** What signals/receiver-names.json measured on one VictoriaMetrics path: each family's stored name. */
function measuredNames(path: "vm-default" | "vm-prometheus-naming"): Map<string, string> {
  return new Map(Object.entries(readReceiverNames().paths[path]?.families ?? {}).map(([family, stored]) => [family, stored.name]));
}

describe.skipIf(binary === "")("gpusynth's OTLP stored by VictoriaMetrics 1.112", () => {
  let verbatim: string[] = [];
  let prometheusNamed: string[] = [];
  beforeAll(async () => {
    [verbatim, prometheusNamed] = await Promise.all([storedNames([]), storedNames(["-opentelemetry.usePrometheusNaming"])]);
  }, 60_000);

  it("keeps every family's vendor name by default", () => {
    const documented = measuredNames("vm-default");
    expect(verbatim.length).toBeGreaterThan(50);
    // The receiver's report on each scrape, under its own names (signals/receiver.md).
    expect(verbatim.filter((name) => REPORT.has(name))).toEqual([...REPORT].sort());
    // Each other stored name is a documented family's own name: nothing renamed, nothing invented.
    for (const name of verbatim.filter((n) => !REPORT.has(n))) expect(documented.get(name), name).toBe(name);
    expect(verbatim).toContain("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  });

  it("stores with -opentelemetry.usePrometheusNaming exactly the names measured family by family for name-fidelity.md", () => {
    const names = measuredNames("vm-prometheus-naming");
    const expected = [...new Set(verbatim.map((name) => (REPORT.has(name) ? name : (names.get(name) as string))))].sort();
    expect(prometheusNamed).toEqual(expected);
    expect(prometheusNamed).toContain("kai_preemption_attempts_total");
  });
});
