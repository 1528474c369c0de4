/**
 * What a node's files hold where the shipped runs do not go yet: a container's restart (a new
 * file beside the last, the one before removed as the kubelet's GC removes it) and a line longer
 * than containerd writes in one record (partial records, cut by bytes). Records go through the
 * same LogsPipeline a run uses; the scheduler's container is the one gpusynth emits.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LogRecordOut } from "@gpusynth/constructs";
import { unixMs } from "@gpusynth/sim";
import { afterAll, describe, expect, it } from "vitest";
import { LogsPipeline } from "../src/logs-pipeline.js";
import { MAX_CONTAINER_LOG_LINE_BYTES, PodLogFiles } from "../src/pod-log-files.js";

const dir = mkdtempSync(join(tmpdir(), "gpusynth-pod-log-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const POD = { namespace: "kai-scheduler", pod: "kai-scheduler-default-5d8f9c7b6d-x2x7k", uid: "0b6f0c3e-9a52-4c1e-8a3f-6f1f4c2d9e11" };
const CONTAINER = "kai-scheduler-default";

/** A line of the scheduler's container in attempt `restart`, as the scheduler log makes it. */
function line(restart: number, timeMs: number, body: string): LogRecordOut {
  return {
    area: "kai-scheduler",
    receiver: "filelog",
    resource: {
      "k8s.namespace.name": POD.namespace,
      "k8s.pod.name": POD.pod,
      "k8s.pod.uid": POD.uid,
      "k8s.container.name": CONTAINER,
      "k8s.container.restart_count": String(restart),
    },
    timeMs: unixMs(timeMs),
    body,
    attributes: {
      "log.iostream": "stderr",
      logtag: "F",
      "log.file.path": `/var/log/pods/${POD.namespace}_${POD.pod}_${POD.uid}/${CONTAINER}/${restart}.log`,
    },
  };
}

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

describe("pod log files", () => {
  it("starts a restarted container's file beside the last and removes the one before (one dead container kept)", async () => {
    const root = join(dir, "restarts");
    const pipeline = new LogsPipeline(new PodLogFiles(root));
    const container = join(root, `${POD.namespace}_${POD.pod}_${POD.uid}`, CONTAINER);
    // A restart within one batch: each attempt's lines in its own file.
    await pipeline.export([line(0, T0, "first attempt"), line(0, T0 + 1000, "crashing"), line(1, T0 + 5000, "second attempt")]);
    expect(readdirSync(container).sort()).toEqual(["0.log", "1.log"]);
    await pipeline.export([line(2, T0 + 9000, "third attempt")]);
    expect(readdirSync(container).sort()).toEqual(["1.log", "2.log"]);
    await pipeline.shutdown();
    expect(readFileSync(join(container, "1.log"), "utf8")).toBe("2026-01-05T09:00:05Z stderr F second attempt\n");
    // A file left by an earlier run is appended to, and counts towards its size.
    const again = new LogsPipeline(new PodLogFiles(root, { maxSizeBytes: 100, maxFiles: 5, monitorIntervalMs: 10_000 }));
    await again.export([line(2, T0 + 20_000, "x".repeat(40)), line(2, T0 + 31_000, "after the check")]);
    await again.shutdown();
    expect(readdirSync(container).sort()).toEqual(["1.log", "2.log", "2.log.20260105-090030"]);
    expect(readFileSync(join(container, "2.log.20260105-090030"), "utf8")).toMatch(/^2026-01-05T09:00:09Z stderr F third attempt\n/);
  });

  it("cuts a line past 16384 bytes into P records and a last F, by bytes, as containerd does", async () => {
    const root = join(dir, "partial");
    const pipeline = new LogsPipeline(new PodLogFiles(root));
    // One byte, then two-byte characters: the first cut falls inside one.
    const long = `a${"é".repeat(10_000)}${"x".repeat(MAX_CONTAINER_LOG_LINE_BYTES)}`;
    const exact = "y".repeat(MAX_CONTAINER_LOG_LINE_BYTES);
    await pipeline.export([line(0, T0 + 1.5, long), line(0, T0 + 2, exact)]);
    await pipeline.shutdown();
    const file = readFileSync(join(root, `${POD.namespace}_${POD.pod}_${POD.uid}`, CONTAINER, "0.log"));
    const records: Array<{ head: string; content: Buffer }> = [];
    for (let at = 0; at < file.length; ) {
      const end = file.indexOf(10, at);
      const record = file.subarray(at, end);
      const third = record.indexOf(32, record.indexOf(32, record.indexOf(32) + 1) + 1);
      records.push({ head: record.subarray(0, third).toString(), content: record.subarray(third + 1) });
      at = end + 1;
    }
    const bytes = Buffer.from(long);
    expect(records.map((r) => [r.head, r.content.length])).toEqual([
      ["2026-01-05T09:00:00.0015Z stderr P", MAX_CONTAINER_LOG_LINE_BYTES],
      ["2026-01-05T09:00:00.0015Z stderr P", MAX_CONTAINER_LOG_LINE_BYTES],
      ["2026-01-05T09:00:00.0015Z stderr F", bytes.length - 2 * MAX_CONTAINER_LOG_LINE_BYTES],
      // Exactly the limit is still one record.
      ["2026-01-05T09:00:00.002Z stderr F", MAX_CONTAINER_LOG_LINE_BYTES],
    ]);
    expect(Buffer.concat(records.slice(0, 3).map((r) => r.content)).equals(bytes)).toBe(true);
    // The first record ends on the first byte of "é" (0xC3), the second starts on its last (0xA9).
    expect([records[0]?.content.at(-1), records[1]?.content.at(0)]).toEqual([0xc3, 0xa9]);
  });
});
