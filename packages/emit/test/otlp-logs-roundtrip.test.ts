/**
 * OTLP logs round trip: Kubernetes events and scheduler log lines sent over gRPC through the
 * SDK's LoggerProviders and log exporter, received by an in-process OTLP receiver, shaped as the
 * k8s_events and filelog receivers deliver them.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, driveAsync, every, K8S_EVENTS_SCOPE, type LogRecordOut } from "@gpusynth/constructs";
import { deliveryConfig, LogsPipeline, OtlpLogsDelivery } from "@gpusynth/emit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attributeMap, type Receiver, startReceiver } from "./otlp-receiver.js";

/** ts⇥ESC[34mINFOESC[0m⇥caller⇥[ — the zap console line KAI writes. */
const ESC = String.fromCharCode(27);
const ZAP_LINE = new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z\\t${ESC}\\[34mINFO${ESC}\\[0m\\t\\S+\\.go:\\d+\\t\\[`);

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url));

describe("OTLP/gRPC logs round trip", () => {
  let receiver: Receiver;
  const sent: LogRecordOut[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    const { blueprint } = loadBlueprint(scenario);
    const failures: Error[] = [];
    const sink = new OtlpLogsDelivery({
      protocol: "grpc",
      url: receiver.url,
      config: deliveryConfig({}, "logs"),
      events: { onOutageStart: (e) => failures.push(e), onRejected: (e) => failures.push(e) },
    });
    const pipeline = new LogsPipeline(sink);
    const run = new ClusterRun(blueprint, { metrics: false, readsGpus: false, logs: true });
    await driveAsync(run, every(60_000, { toMs: 32 * 60_000 }), [
      {
        consume: async (frame) => {
          sent.push(...frame.logs);
          await pipeline.export(frame.logs);
        },
      },
    ]);
    await pipeline.shutdown();
    expect(failures).toEqual([]);
    expect(sink.stats().pending.items).toBe(0);
  });
  afterAll(async () => receiver.close());

  const received = () =>
    receiver.logRequests.flatMap((r) =>
      r.resourceLogs.flatMap((rl) =>
        rl.scopeLogs.map((sl) => ({ resource: attributeMap(rl.resource.attributes), scope: sl.scope, records: sl.logRecords })),
      ),
    );

  it("receives every record sent", () => {
    expect(received().reduce((n, g) => n + g.records.length, 0)).toBe(sent.length);
    expect(sent.some((r) => r.receiver === "k8s_events")).toBe(true);
    expect(sent.some((r) => r.receiver === "filelog")).toBe(true);
  });

  it("delivers Kubernetes events as the k8s_events receiver does", () => {
    const groups = received().filter((g) => g.scope?.name === K8S_EVENTS_SCOPE.name);
    expect(groups.length).toBeGreaterThan(0);
    for (const g of groups) {
      expect(g.scope?.version).toBe(K8S_EVENTS_SCOPE.version);
      expect(Object.keys(g.resource).sort()).toEqual(
        [
          "k8s.node.name",
          "k8s.object.api_version",
          "k8s.object.fieldpath",
          "k8s.object.kind",
          "k8s.object.name",
          "k8s.object.resource_version",
          "k8s.object.uid",
        ].sort(),
      );
      // Many records: the ones that differ are collected and compared once.
      const fields = [
        "k8s.event.reason",
        "k8s.event.action",
        "k8s.event.start_time",
        "k8s.event.name",
        "k8s.event.uid",
        "k8s.namespace.name",
      ];
      const unlike = g.records.filter((r) => {
        const a = attributeMap(r.attributes);
        const severity =
          (r.severityNumber === "SEVERITY_NUMBER_INFO" && r.severityText === "Normal") ||
          (r.severityNumber === "SEVERITY_NUMBER_WARN" && r.severityText === "Warning");
        const count = r.attributes?.find((x) => x.key === "k8s.event.count")?.value;
        return (
          typeof r.body?.stringValue !== "string" ||
          !severity ||
          (r.observedTimeUnixNano ?? "0") !== "0" ||
          !fields.every((f) => f in a) ||
          count === undefined ||
          !("intValue" in count)
        );
      });
      expect(unlike.slice(0, 3)).toEqual([]);
    }
    const evicted = groups.flatMap((g) => g.records).filter((r) => attributeMap(r.attributes)["k8s.event.reason"] === "Evict");
    expect(evicted.map((r) => r.body?.stringValue)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Pod runai-borrower\/\S+ was preempted by workload runai-owner\/pg-owner-/)]),
    );
  });

  it("delivers the scheduler's log as filelog with the container operator does", () => {
    const groups = received().filter((g) => (g.scope?.name ?? "") === "");
    expect(groups.length).toBeGreaterThan(0);
    for (const g of groups) {
      expect(g.resource).toMatchObject({
        "k8s.namespace.name": "kai-scheduler",
        "k8s.container.name": "kai-scheduler-default",
        "k8s.container.restart_count": "0",
      });
      // Thousands of lines: the ones that differ are collected and compared once.
      const unlike = g.records.filter((r) => {
        const a = attributeMap(r.attributes);
        return (
          (r.severityNumber ?? "SEVERITY_NUMBER_UNSPECIFIED") !== "SEVERITY_NUMBER_UNSPECIFIED" ||
          !ZAP_LINE.test(r.body?.stringValue ?? "") ||
          a["log.iostream"] !== "stderr" ||
          a.logtag !== "F" ||
          // The chart's preset keeps the file's path, not its name (include_file_name: false).
          "log.file.name" in a ||
          !String(a["log.file.path"] ?? "").endsWith("/kai-scheduler-default/0.log")
        );
      });
      expect(unlike.slice(0, 3)).toEqual([]);
    }
  });

  it("sends a batch's lines of one container as one ScopeLogs, as a collector's filelog receiver does", () => {
    const filelogScopes = receiver.logRequests.map((r) =>
      r.resourceLogs.filter((rl) => rl.scopeLogs.some((sl) => (sl.scope?.name ?? "") === "")).map((rl) => rl.scopeLogs.length),
    );
    expect(filelogScopes.flat().length).toBeGreaterThan(0);
    expect(filelogScopes.flat().every((n) => n === 1)).toBe(true);
  });
});
