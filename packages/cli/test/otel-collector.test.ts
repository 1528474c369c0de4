/**
 * otel-collector.yaml in a real OpenTelemetry Collector (deploy/otelcol/builder.yaml, v0.161.0),
 * the shipped file unchanged: its endpoints and salt come from the environment. Two scenarios run
 * live, one after the other, and push their metrics and logs into it, one over OTLP/gRPC and one
 * over OTLP/HTTP. The collector remote-writes the metrics into a real Prometheus and sends the
 * logs to a real log backend (VictoriaLogs); a second configuration file, merged over the shipped
 * one as `otelcol --config a --config b` merges, taps the same receiver twice more: the logs as
 * the pipeline left them (a file exporter, OTLP-JSON), and everything untransformed (a second
 * Prometheus and file), so each check can fail — the names are there before the transform.
 *
 * The logs reach a real log backend twice (VictoriaLogs, as the pipeline left them and
 * untransformed): every record arrives, every documented field is queryable, and the failed-job
 * walk from a crash-looping pod to its events and the scheduler's lines answers with LogsQL as
 * from the OTLP-JSON file.
 *
 * The real transform processor is the judge of the statements: `gpusynth leakcheck` finds no
 * blueprint name in what the collector exported, and finds them in the untransformed copy; the
 * journeys' joins on namespace and pod answer as in clear.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { PrometheusServer, prometheusBinary } from "../../emit/test/prometheus-server.js";
import { main } from "../src/main.js";
import { readSignals } from "../src/signals-doc.js";
import { captureOutput } from "./helpers.js";
import { deliveryReport, startLive } from "./live-process.js";
import { Collector, otelcolBinary, validateCollectorConfig } from "./otel-collector.js";
import { VictoriaLogs, victoriaLogsBinary } from "./victoria-logs.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const SHIPPED = join(root, "otel-collector.yaml");
const SALT = "a-test-salt-0123456789";
/**
 * One scenario per transport (their names differ, so each leakcheck reads one blueprint's), half
 * a simulated hour each: the storm's preemptions and evictions, and the crash loop's restarts.
 * The scheduler's log at V=3 writes every job's attempt each second; crash-loop keeps V=2 (its
 * actions) to hold the volume down.
 */
const RUNS = [
  { blueprint: "blueprints/scenarios/preemption-storm.yaml", protocol: "grpc", verbosity: "3" },
  { blueprint: "blueprints/scenarios/crash-loop.yaml", protocol: "http/protobuf", verbosity: "2" },
] as const;

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}
interface LogsRequest {
  resourceLogs?: Array<{ scopeLogs: Array<{ logRecords: unknown[] }> }>;
}
/** A file's requests, parsed once: the collector has written it whole before the first test reads it. */
const parsedLogs = new Map<string, LogsRequest[]>();
const logLines = (file: string): LogsRequest[] => {
  let requests = parsedLogs.get(file);
  if (requests === undefined) {
    requests = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as LogsRequest);
    parsedLogs.set(file, requests);
  }
  return requests;
};
const recordCount = (file: string) =>
  logLines(file).reduce(
    (n, r) => n + (r.resourceLogs ?? []).reduce((m, rl) => m + rl.scopeLogs.reduce((k, sl) => k + sl.logRecords.length, 0), 0),
    0,
  );

describe.skipIf(otelcolBinary === "" || victoriaLogsBinary === "" || prometheusBinary === "")(
  "otel-collector.yaml in a real collector",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "gpusynth-otelcol-"));
    const files = { logs: join(dir, "logs.jsonl"), clearLogs: join(dir, "clear-logs.jsonl") };
    let pseudonymised: PrometheusServer;
    let clear: PrometheusServer;
    let logBackend: VictoriaLogs;
    /** The untransformed logs in a log backend of their own. */
    let clearLogBackend: VictoriaLogs;
    let collector: Collector | undefined;
    let env: Record<string, string>;
    /** The time of the last pushed sample, where both Prometheus servers are queried. */
    let at = 0;

    const leakcheck = async (blueprint: string, source: string[]) => {
      const { output, text } = captureOutput();
      const code = await main(["leakcheck", "--blueprint", join(root, blueprint), ...source, "--limit", "3"], output);
      return { code, text: text.out };
    };
    const query = async (server: PrometheusServer, promql: string, atMs?: number) =>
      Number((await server.query(promql, atMs))[0]?.value[1] ?? 0);

    beforeAll(async () => {
      [pseudonymised, clear, logBackend, clearLogBackend] = await Promise.all([
        PrometheusServer.startRemoteWriteReceiver(),
        PrometheusServer.startRemoteWriteReceiver(),
        VictoriaLogs.start(),
        VictoriaLogs.start(),
      ]);
      env = {
        GPUSYNTH_PSEUDONYM_SALT: SALT,
        PROMETHEUS_REMOTE_WRITE: `${pseudonymised.api}/api/v1/write`,
        LOGS_OTLP_ENDPOINT: logBackend.otlpEndpoint,
      };
      // The taps: the shipped logs pipeline also writes a file, and an untransformed copy of
      // everything goes to the second Prometheus (with the shipped exporter's settings) and a file.
      const shipped = parse(readFileSync(SHIPPED, "utf8")) as {
        exporters: { prometheus_remote_write: Record<string, unknown> };
        service: { pipelines: { logs: { exporters: string[] } } };
      };
      const taps = join(dir, "taps.yaml");
      writeFileSync(
        taps,
        stringify({
          exporters: {
            "file/logs": { path: files.logs },
            "file/clear-logs": { path: files.clearLogs },
            "otlp_http/clear-logs": { endpoint: clearLogBackend.otlpEndpoint },
            "prometheus_remote_write/clear": { ...shipped.exporters.prometheus_remote_write, endpoint: `${clear.api}/api/v1/write` },
          },
          service: {
            pipelines: {
              logs: { exporters: [...shipped.service.pipelines.logs.exporters, "file/logs"] },
              "metrics/clear": { receivers: ["otlp"], processors: ["batch"], exporters: ["prometheus_remote_write/clear"] },
              "logs/clear": { receivers: ["otlp"], processors: ["batch"], exporters: ["file/clear-logs", "otlp_http/clear-logs"] },
            },
          },
        }),
      );
      collector = await Collector.start([SHIPPED, taps], env);
      const { OTLP_GRPC_ENDPOINT, OTLP_HTTP_ENDPOINT } = collector.endpoints;
      // One after the other: both clusters have targets of the same job and instance
      // (kube-state-metrics, the scheduler) with series of the same labels, and Prometheus
      // refuses a request with a sample older than one it holds (out of order), so two runs at
      // once would interleave into refusals.
      for (const { blueprint, protocol, verbosity } of RUNS) {
        const live = startLive(
          [
            "--speed",
            "600",
            "--interval",
            "1s",
            "--duration",
            "3s",
            "--scheduler-verbosity",
            verbosity,
            "--listen",
            "none",
            "--json",
            blueprint,
          ],
          {
            OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
            OTEL_EXPORTER_OTLP_ENDPOINT: `http://${protocol === "grpc" ? OTLP_GRPC_ENDPOINT : OTLP_HTTP_ENDPOINT}`,
          },
        );
        const { code } = await live.exited();
        expect(code, live.stderr()).toBe(0);
        for (const signal of ["metrics", "logs"] as const)
          expect(deliveryReport(live.stdout(), signal).nothingLost, live.stderr()).toBe(true);
      }
      // Stopping the collector flushes its batches and exporters: everything it took is out.
      await collector.stop();
      at = await query(clear, "max(timestamp(DCGM_FI_DEV_GPU_UTIL))");
    }, 90_000);

    afterAll(async () => {
      await collector?.stop();
      await Promise.all([pseudonymised?.stop(), clear?.stop(), logBackend?.stop(), clearLogBackend?.stop()]);
      rmSync(dir, { recursive: true, force: true });
    });

    it("is a configuration `otelcol validate` accepts", () => {
      const { code, output } = validateCollectorConfig([SHIPPED], env);
      expect(code, output).toBe(0);
    });

    it("runs without a warning or an error: no deprecated name, no statement the transform processor rewrote or failed", () => {
      // The collector's console log: "<time>\t<level>\t<caller>\t<message>\t<fields>".
      const complaints = (collector?.log() ?? "").split("\n").filter((line) => /^\S+\t(warn|error)\t/.test(line));
      const rewritten = (collector?.log() ?? "")
        .split("\n")
        .filter((line) => line.includes("paths were modified to include their context"));
      expect([...complaints, ...rewritten].map((line) => line.slice(0, 2000))).toEqual([]);
    });

    // Each run's names, in each place the collector wrote to: the source in clear, then as exported.
    const places = RUNS.flatMap(({ blueprint }) => [
      { blueprint, place: "Prometheus", clear: () => ["--prometheus", clear.api], exported: () => ["--prometheus", pseudonymised.api] },
      { blueprint, place: "the logs", clear: () => ["--otlp-json", files.clearLogs], exported: () => ["--otlp-json", files.logs] },
      {
        blueprint,
        place: "VictoriaLogs",
        clear: () => ["--victorialogs", clearLogBackend.url],
        exported: () => ["--victorialogs", logBackend.url],
      },
    ]);
    it.each(places)("leaves no name of $blueprint in clear in $place, where the untransformed copy has them", async (where) => {
      const before = await leakcheck(where.blueprint, where.clear());
      expect(before.code, before.text).toBe(1);
      const after = await leakcheck(where.blueprint, where.exported());
      expect(after.text).toMatch(/leakcheck: none of \d+ sensitive names appears in clear/);
      expect(after.code).toBe(0);
    });

    it("delivers every log record to both log backends: the burst of a storm at ×600 arrives complete", async () => {
      const records = recordCount(files.logs);
      expect(records).toBeGreaterThan(100);
      expect(recordCount(files.clearLogs)).toBe(records);
      expect(await logBackend.count("*")).toBe(records);
      expect(await clearLogBackend.count("*")).toBe(records);
    });

    it("stores every log field signals/ documents as a queryable field under its documented name", async () => {
      // VictoriaLogs keeps no empty field (an empty value reads as a missing one): the fields the
      // run sent only empty, such as k8s.event.action of legacy-recorder events, are not stored.
      const sent = new Set<string>();
      for (const request of logLines(files.clearLogs))
        for (const rl of request.resourceLogs ?? []) {
          const resource = (rl as { resource?: { attributes?: KeyValue[] } }).resource?.attributes ?? [];
          for (const sl of rl.scopeLogs)
            for (const record of sl.logRecords as Array<{ attributes?: KeyValue[] }>)
              for (const a of [...resource, ...(record.attributes ?? [])])
                if (Object.values(a.value).some((v) => v !== "")) sent.add(a.key);
        }
      const documented = readSignals(join(root, "signals"))
        .filter((f) => (f.type === "log-resource" || f.type === "log-attribute") && f.status === "emitted")
        .map((f) => f.name)
        .filter((name) => sent.has(name));
      expect(documented.length).toBeGreaterThan(10);
      const stored = new Set(await clearLogBackend.fieldNames());
      expect(documented.filter((name) => !stored.has(name))).toEqual([]);
    });

    it("walks from a crash-looping pod to its events and the scheduler's lines with LogsQL, as from the OTLP-JSON file", async () => {
      // The pod the kubelet backs off restarting, and what the file holds about it.
      const records = logLines(files.clearLogs).flatMap((request) =>
        (request.resourceLogs ?? []).flatMap((rl) =>
          rl.scopeLogs.flatMap((sl) =>
            (sl.logRecords as Array<{ body?: { stringValue?: string } }>).map((record) => ({
              object: (
                rl as { resource?: { attributes?: Array<{ key: string; value: { stringValue?: string } }> } }
              ).resource?.attributes?.find((a) => a.key === "k8s.object.name")?.value.stringValue,
              body: record.body?.stringValue ?? "",
            })),
          ),
        ),
      );
      const pod = records.find((r) => r.body.startsWith("Back-off restarting failed container"))?.object;
      expect(pod).toBeDefined();
      const events = records.filter((r) => r.object === pod).length;
      const mentions = records.filter((r) => r.body.includes(pod as string)).length;
      expect(events).toBeGreaterThan(0);
      expect(mentions).toBeGreaterThan(0);
      expect(await clearLogBackend.count(`"k8s.object.name":=${JSON.stringify(pod)}`)).toBe(events);
      expect(await clearLogBackend.count(`_msg:~${JSON.stringify((pod as string).replace(/[.*+?^${}()|[\]\\-]/g, "\\$&"))}`)).toBe(
        mentions,
      );
    });

    it("gives a name one pseudonym, the salted SHA-256 of it, in labels, log attributes and event bodies", async () => {
      const values = async (server: PrometheusServer, label: string, family: string) =>
        new Set((await server.query(`count by (${label}) (${family})`, at * 1000)).map((s) => s.metric[label] as string));
      const sha256 = (text: string) =>
        createHash("sha256")
          .update(SALT + text)
          .digest("hex");
      const namespaces = await values(pseudonymised, "namespace", "kube_pod_info");
      expect(namespaces).toEqual(new Set([...(await values(clear, "namespace", "kube_pod_info"))].map(sha256)));
      const containers = await values(pseudonymised, "container", "kube_pod_container_info");
      expect(containers).toEqual(new Set([...(await values(clear, "container", "kube_pod_container_info"))].map(sha256)));
      // The events name the same namespaces and containers under the same pseudonyms.
      const logged = { namespaces: new Set<string>(), containers: new Set<string>() };
      for (const request of logLines(files.logs))
        for (const rl of request.resourceLogs ?? [])
          for (const sl of rl.scopeLogs)
            for (const record of sl.logRecords as Array<{
              attributes: Array<{ key: string; value: { stringValue?: string } }>;
              body?: { stringValue?: string };
            }>) {
              const namespace = record.attributes.find((a) => a.key === "k8s.namespace.name")?.value.stringValue;
              if (namespace !== undefined && namespaces.has(namespace)) logged.namespaces.add(namespace);
              const container = /^(?:Created|Started) container ([0-9a-f]{64})$/.exec(record.body?.stringValue ?? "")?.[1];
              if (container !== undefined) logged.containers.add(container);
            }
      expect(logged.namespaces.size).toBeGreaterThan(0);
      expect(logged.containers.size).toBeGreaterThan(0);
      for (const container of logged.containers) expect(containers).toContain(container);
    });

    it("answers the joins on namespace and pod as the names in clear do", async () => {
      expect(at).toBeGreaterThan(0);
      const joins = [
        'count(DCGM_FI_DEV_GPU_UTIL{pod!=""})',
        'count(DCGM_FI_DEV_GPU_UTIL{pod!=""} * on (namespace, pod) group_left () max by (namespace, pod) (kube_pod_info))',
        'count(max by (namespace, pod) (kube_pod_status_phase{phase="Running"} == 1) * on (namespace, pod) group_left () max by (namespace, pod) (kube_pod_labels))',
        "count(count by (namespace) (kube_pod_info))",
        "count(kube_pod_container_status_restarts_total > 0)",
      ];
      for (const promql of joins) {
        const [a, b] = [await query(pseudonymised, promql, at * 1000), await query(clear, promql, at * 1000)];
        expect(b, promql).toBeGreaterThan(0);
        expect(a, promql).toBe(b);
      }
    });
  },
);
