/**
 * `gpusynth run` live, as a user starts it: it pushes OTLP to the endpoint the standard
 * OTEL_* variables name, serves the scrape targets, and survives a collector that is down.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { attributeMap, startHttpReceiver, startReceiver } from "../../emit/test/otlp-receiver.js";
import { CLUSTER_JOBS, deliveryReport, downReceiver } from "./live-process.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const bin = join(root, "packages/cli/bin/gpusynth.js");

function gpusynth(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.on("close", (code) => resolve({ code, stderr, stdout }));
  });
}

const scenario = "blueprints/scenarios/preemption-storm.yaml";
// Three frames, 100 ms (6 simulated minutes) apart.
const fast = ["run", "--speed", "3600", "--interval", "100ms", "--duration", "200ms", "--listen", "127.0.0.1:0", scenario];

describe("gpusynth run (live)", () => {
  // With no protocol set, the specification's default (OTLP/HTTP, binary protobuf); and gRPC.
  it.each([
    { protocol: "http/protobuf", env: {} as Record<string, string>, start: startHttpReceiver },
    { protocol: "grpc", env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } as Record<string, string>, start: startReceiver },
  ])("pushes OTLP ($protocol) to OTEL_EXPORTER_OTLP_ENDPOINT, one resource per target", async ({ protocol, env, start }) => {
    const receiver = await start();
    const { code, stderr } = await gpusynth(fast, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env });
    await receiver.close();
    expect(code).toBe(0);
    expect(stderr).toContain(`pushing OTLP (${protocol}) to ${receiver.url}`);
    expect(stderr).toMatch(/scrape targets listed at http:\/\/127\.0\.0\.1:\d+\/sd/);
    const jobs = new Set(
      receiver.requests.flatMap((r) => r.resourceMetrics.map((rm) => attributeMap(rm.resource.attributes)["service.name"])),
    );
    expect([...jobs].sort()).toEqual(CLUSTER_JOBS);
  });

  it("writes --otlp-json beside the push: the same scrapes, as the receiver got them", async () => {
    const receiver = await startReceiver();
    const dir = mkdtempSync(join(tmpdir(), "gpusynth-live-file-"));
    const file = join(dir, "pushed.jsonl");
    const { code, stderr, stdout } = await gpusynth([...fast.slice(0, -1), "--otlp-json", file, "--json", scenario], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    });
    await receiver.close();
    expect(code, stderr).toBe(0);
    expect(stderr).toContain(`gpusynth: wrote ${file}`);
    const points = (requests: Array<{ resourceMetrics: unknown[] }>) =>
      requests.flatMap((r) => r.resourceMetrics).map((rm) => JSON.stringify(rm).match(/"timeUnixNano"/g)?.length ?? 0);
    const written = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { resourceMetrics: unknown[] });
    expect(written.length).toBeGreaterThan(0);
    expect(points(written).reduce((a, b) => a + b, 0)).toBe(deliveryReport(stdout, "metrics").delivered);
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps running when the collector is down and reports what it could not deliver, to a person and as JSON", async () => {
    const down = await downReceiver();
    const { code, stderr, stdout } = await gpusynth([...fast.slice(0, -1), "--json", scenario], {
      OTEL_EXPORTER_OTLP_ENDPOINT: down.url,
      // Over OTLP/HTTP the SDK's transport retries a failed connection within the export timeout
      // before it answers, and the run's last flush waits one timeout: 2 s, not the default 10.
      OTEL_EXPORTER_OTLP_TIMEOUT: "2000",
    }).finally(() => down.close());
    expect(code).toBe(0);
    expect(stderr).toMatch(/warning: OTLP metrics export to .* failed .*; the run goes on, queuing up to 64 MiB and retrying/);
    const metrics = deliveryReport(stdout, "metrics");
    expect(metrics.delivered).toBe(0);
    expect(metrics.undelivered).toBe(metrics.total);
    expect(metrics.total).toBeGreaterThan(0);
    // The same counts in the closing line a person reads.
    const total = metrics.total.toLocaleString("en-US");
    expect(stderr).toContain(`gpusynth: OTLP metrics: 0 of ${total} points delivered in 0 requests; ${total} points undelivered at exit\n`);
    // On the consumers' clock, and where the scenario's calendar got to (no warm-up: from 09:00).
    expect(stderr).toMatch(/stopped at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ, the cluster's 2026-01-05 09:\d\d \(\+\S+ simulated\)/);
    const report = JSON.parse(stdout) as { blueprint: string; stoppedAt: string; simulatedMs: number; behindMs: number };
    expect(report.blueprint).toBe("preemption-storm");
    expect(stderr).toContain(`stopped at ${report.stoppedAt.slice(0, 19).replace("T", " ")}Z`);
    // Three frames 6 simulated minutes apart: at least the second was reached.
    expect(report.simulatedMs).toBeGreaterThanOrEqual(6 * 60_000);
  }, 120_000);

  it("serves the Run:ai control-plane API from the running simulation, behind the token GPUSYNTH_API_TOKEN names", async () => {
    const token = "live-test-token-0123456789";
    const args = ["run", "--speed", "120", "--interval", "1s", "--duration", "5s", "--api", "127.0.0.1:0", scenario];
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: root,
      env: { ...process.env, GPUSYNTH_API_TOKEN: token },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    const announced = new Promise<string>((resolve) =>
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
        const url = /control-plane API \(2\.24\) at (http:\/\/\S+\/api\/v1)/.exec(stderr)?.[1];
        if (url !== undefined) resolve(url);
      }),
    );
    const api = await announced;
    const nodes = async (authorization?: string) =>
      fetch(`${api}/nodes`, authorization === undefined ? {} : { headers: { authorization } });
    let answer = await nodes(`Bearer ${token}`);
    while (answer.status === 503) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await nodes(`Bearer ${token}`);
    }
    expect(answer.status).toBe(200);
    const listed = ((await answer.json()) as { nodes: Array<{ name: string }> }).nodes;
    expect(listed.length).toBeGreaterThan(0);
    expect((await nodes()).status).toBe(401);
    expect((await nodes("Bearer wrong")).status).toBe(401);
    expect(await closed).toBe(0);
    expect(stderr).not.toContain(token); // a token the user chose is not echoed
    const answered = /API requests answered: (.*)/.exec(stderr)?.[1] ?? "";
    expect(answered).toMatch(/\b1 × 200\b/);
    expect(answered).toMatch(/\b2 × 401\b/);
  }, 60_000);

  it("refuses a protocol it does not know, naming the variable", async () => {
    const { code, stderr } = await gpusynth(fast, { OTEL_EXPORTER_OTLP_PROTOCOL: "carrier-pigeon" });
    expect(code).toBe(2);
    expect(stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL: expected one of grpc, http/protobuf, http/json, found "carrier-pigeon"');
  });
});
