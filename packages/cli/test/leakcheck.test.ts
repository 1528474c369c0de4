/**
 * gpusynth leakcheck finds every sensitive blueprint name that gpusynth's raw output carries —
 * in OTLP-JSON and in a real Prometheus scraping it — and nothing once the same data has been
 * pseudonymised with a salted hash the way the collector's transform processor does it.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, type TargetSamples } from "@gpusynth/constructs";
import { ScrapeServer, SD_PATH } from "@gpusynth/emit";
import { simulatedMs } from "@gpusynth/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusServer, prometheusBinary } from "../../emit/test/prometheus-server.js";
import { namesIn, type SensitiveName, sensitiveNames } from "../src/leakcheck/sensitive.js";
import { main } from "../src/main.js";
import { captureOutput } from "./helpers.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const scenario = repo("blueprints/scenarios/crash-loop.yaml");
const dir = mkdtempSync(join(tmpdir(), "gpusynth-leakcheck-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every string that contains a sensitive name becomes SHA256(salt + value), as OTTL's SHA256(Concat([salt, value], "")) would. */
function pseudonymise(line: string, names: readonly string[], salt: string): string {
  return JSON.stringify(JSON.parse(line), (_key, value: unknown) =>
    typeof value === "string" && names.some((n) => value.includes(n))
      ? createHash("sha256")
          .update(salt + value)
          .digest("hex")
      : value,
  );
}

describe("a sensitive name in a value", () => {
  const names: SensitiveName[] = [
    { value: "train-bad", kind: "workload" },
    { value: "vision", kind: "project" },
    { value: "train", kind: "workload" },
    { value: "ati", kind: "user" },
  ];
  const found = (text: string) => namesIn(text, names).map((n) => n.value);

  it("is found whole inside a derived name, every name it holds, longest first", () => {
    expect(found("runai-vision")).toEqual(["vision"]);
    expect(found("train-bad-0-0")).toEqual(["train-bad", "train"]);
    expect(found("pg-train-7-3f2a")).toEqual(["train"]);
    expect(found("ati")).toEqual(["ati"]);
  });

  it("is not found glued to other letters or digits, nor in another case", () => {
    expect(found("Consolidation")).toEqual([]);
    expect(found("trainer-1")).toEqual([]);
    expect(found("visions")).toEqual([]);
    expect(found("Vision")).toEqual([]);
    expect(found("")).toEqual([]);
  });
});

describe("gpusynth leakcheck on OTLP-JSON", () => {
  const metrics = join(dir, "metrics.jsonl");
  const logs = join(dir, "logs.jsonl");

  beforeAll(async () => {
    const { output } = captureOutput();
    // Scraped every minute: every name is on a series for minutes at a time.
    expect(
      await main(
        ["run", "--offline", "--duration", "40m", "--interval", "1m", "--otlp-json", metrics, "--otlp-json-logs", logs, scenario],
        output,
      ),
    ).toBe(0);
  }, 60_000);

  it("finds every sensitive name of the blueprint in gpusynth's raw output and exits 1", async () => {
    const { output, text } = captureOutput();
    expect(
      await main(["leakcheck", "--blueprint", scenario, "--otlp-json", metrics, "--otlp-json", logs, "--limit", "1000000"], output),
    ).toBe(1);
    const found = new Set([...text.out.matchAll(/contains \w+ "([^"]+)"/g)].map((m) => m[1]));
    // The project, its department, its user and the three workloads all reach the telemetry.
    expect([...found].sort()).toEqual(
      sensitiveNames(loadBlueprint(scenario).blueprint)
        .map((n) => n.value)
        .sort(),
    );
    expect(text.out).toMatch(
      /LEAK .*metrics\.jsonl:\d+ resourceMetrics\[0\]\.scopeMetrics\[0\]\.metrics\[kube_pod_info\]\.gauge\.dataPoints\[\d+\]\.attributes\[namespace\]\.value\.stringValue: "runai-vision" contains project "vision"/,
    );
    expect(text.out).toMatch(/logs\.jsonl:\d+ .*body\.stringValue: ".*train-bad.*" contains workload "train-bad"/);
  });

  it("finds nothing once every value carrying a name is replaced by its salted hash, and exits 0", async () => {
    const names = sensitiveNames(loadBlueprint(scenario).blueprint).map((n) => n.value);
    const hashed = [metrics, logs].map((file) => {
      const out = `${file}.hashed`;
      writeFileSync(
        out,
        readFileSync(file, "utf8")
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => pseudonymise(l, names, "pepper"))
          .join("\n"),
      );
      return out;
    });
    const { output, text } = captureOutput();
    expect(
      await main(["leakcheck", "--blueprint", scenario, "--otlp-json", hashed[0] as string, "--otlp-json", hashed[1] as string], output),
    ).toBe(0);
    expect(text.out).toBe(`leakcheck: none of ${names.length} sensitive names appears in clear\n`);
  });

  it("finds a name a JSON writer wrote with \\u escapes, and fails on a file that is no JSON (lines without a name are not parsed)", async () => {
    // A collector's file exporter (Go) writes `<` as \u003c; any writer may write a letter as \u0076.
    const record = (body: string) => `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"${body}"}}]}]}]}`;
    const escaped = join(dir, "escaped.jsonl");
    writeFileSync(escaped, `${record("queue \\u003cruna1-x\\u003e")}\n${record("runai-\\u0076ision")}\n`);
    const found = captureOutput();
    expect(await main(["leakcheck", "--blueprint", scenario, "--otlp-json", escaped], found.output)).toBe(1);
    expect(found.text.out).toMatch(/^LEAK .*escaped\.jsonl:2 .*"runai-vision" contains project "vision"\nleakcheck: 1 finding/);
    const notJson = join(dir, "exposition.txt");
    writeFileSync(notJson, "# HELP up The scraping was successful.\nup 1\n");
    const failed = captureOutput();
    expect(await main(["leakcheck", "--blueprint", scenario, "--otlp-json", notJson], failed.output)).toBe(2);
    expect(failed.text.err).toMatch(/exposition\.txt: .*is not valid JSON/);
  });

  it.each([
    [["leakcheck", "--otlp-json", "x.jsonl"], /--blueprint: expected the blueprint/],
    [["leakcheck", "--blueprint", scenario], /expected at least one source/],
    [["leakcheck", "--blueprint", scenario, "--otlp-json", "/nonexistent.jsonl"], /--otlp-json \/nonexistent\.jsonl: ENOENT/],
  ])("%j fails with a clear message and exit code 2", async (args, message) => {
    const { output, text } = captureOutput();
    expect(await main(args, output)).toBe(2);
    expect(text.err).toMatch(message);
  });
});

describe.skipIf(prometheusBinary === "")("gpusynth leakcheck on a real Prometheus", () => {
  const server = new ScrapeServer();
  let prometheus: PrometheusServer | undefined;

  beforeAll(async () => {
    const { blueprint } = loadBlueprint(scenario);
    let collected: readonly TargetSamples[] = [];
    drive(new ClusterRun(blueprint), [simulatedMs(20 * 60_000)], (frame) => {
      collected = frame.targets;
    });
    server.update(collected);
    const sd = await server.listen("127.0.0.1", 0);
    prometheus = await PrometheusServer.start(`http://127.0.0.1:${sd.port}${SD_PATH}`);
    await prometheus.waitForTargets(collected.length);
  }, 90_000);

  afterAll(async () => {
    await prometheus?.stop();
    await server.close();
  });

  it("finds the planted names in the series Prometheus scraped", async () => {
    const { output, text } = captureOutput();
    expect(
      await main(["leakcheck", "--blueprint", scenario, "--prometheus", (prometheus as PrometheusServer).api, "--limit", "100000"], output),
    ).toBe(1);
    expect(text.out).toMatch(/LEAK http:\/\/127\.0\.0\.1:\d+ kube_pod_info\{.*\} namespace: "runai-vision" contains project "vision"/);
    const found = new Set([...text.out.matchAll(/contains \w+ "([^"]+)"/g)].map((m) => m[1]));
    for (const name of ["vision", "research", "val", "train-ok", "train-bad"]) expect(found, name).toContain(name);
  });
});

/**
 * Loki cannot run here (no Docker engine, no Debian package), so a local HTTP server answers
 * query_range in the shape Loki's HTTP API documents (streams with labels, [ns, line, metadata]
 * values), in two pages, to test that leakcheck reads labels, lines and metadata and pages on.
 */
describe("gpusynth leakcheck on Loki's query_range API", () => {
  let url = "";
  let close: () => Promise<void> = async () => {};
  const requests: URLSearchParams[] = [];

  beforeAll(async () => {
    const { createServer } = await import("node:http");
    const server = createServer((req, res) => {
      const query = new URL(req.url ?? "", "http://x").searchParams;
      requests.push(query);
      const limit = Number(query.get("limit"));
      const first = requests.length === 1;
      const start = BigInt(query.get("start") ?? "0");
      const values = first
        ? Array.from({ length: limit }, (_, i) => [
            String(start + BigInt(i)),
            i === 7 ? "Created container train-ok" : "Pulled image",
            { k8s_namespace_name: "kube-system" },
          ])
        : [[String(start), "ok", { k8s_namespace_name: "runai-vision" }]];
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          status: "success",
          data: { resultType: "streams", result: [{ stream: { service_name: first ? "k8s_events" : "runai-vision" }, values }] },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close());

  it("finds names in lines, stream labels and structured metadata, across pages", async () => {
    const { output, text } = captureOutput();
    expect(await main(["leakcheck", "--blueprint", scenario, "--loki", url], output)).toBe(1);
    const start = BigInt(requests[0]?.get("start") ?? "0");
    expect(text.out).toContain(`line at ${start + 7n}: "Created container train-ok" contains workload "train-ok"`);
    expect(text.out).toMatch(/service_name: "runai-vision" contains project "vision"/);
    expect(text.out).toMatch(/line at \d+ k8s_namespace_name: "runai-vision" contains project "vision"/);
    expect(requests.map((q) => q.get("query"))).toEqual(['{service_name=~".+"}', '{service_name=~".+"}']);
    // The second page starts just after the last line of the first (5,000 lines).
    expect(requests[1]?.get("start")).toBe(String(start + 5_000n));
  });
});
