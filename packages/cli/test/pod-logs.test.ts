/**
 * `gpusynth run --pod-logs`: the container log files a node keeps, next to the OTLP-JSON log
 * records of the same run. Every line of the push is in the files, in order, as the CRI line
 * containerd writes (kubelet v1.30.2 / containerd v1.7.18, src/pod-log-files.ts), and the files
 * rotate as the kubelet rotates them.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { captureOutput, repoFile } from "./helpers.js";

interface LogsRequest {
  resourceLogs: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
    scopeLogs: Array<{ logRecords: Array<{ timeUnixNano: string; body: { stringValue: string } }> }>;
  }>;
}

const dir = mkdtempSync(join(tmpdir(), "gpusynth-pod-logs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The scheduler's lines of an OTLP-JSON logs file: resource, time (ns) and body. */
function pushedLines(file: string) {
  const lines: Array<{ resource: Record<string, string>; timeUnixNano: string; body: string }> = [];
  for (const text of readFileSync(file, "utf8").split("\n")) {
    if (text === "") continue;
    for (const rl of (JSON.parse(text) as LogsRequest).resourceLogs) {
      const resource = Object.fromEntries(rl.resource.attributes.map((a) => [a.key, a.value.stringValue ?? ""]));
      if (resource["k8s.container.name"] === undefined) continue; // Kubernetes events
      for (const sl of rl.scopeLogs)
        for (const r of sl.logRecords) lines.push({ resource, timeUnixNano: r.timeUnixNano, body: r.body.stringValue });
    }
  }
  return lines;
}

/** A container directory's files, oldest first: rotated (gzipped or not) in name order, then the live one. */
function containerFiles(container: string): string[] {
  const names = readdirSync(container);
  const live = names.filter((n) => n.endsWith(".log")).sort();
  const rotated = names.filter((n) => !n.endsWith(".log")).sort();
  return [...rotated, ...live];
}

const read = (path: string) => (path.endsWith(".gz") ? gunzipSync(readFileSync(path)) : readFileSync(path)).toString("utf8");
const CRI_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z) (stdout|stderr) ([PF]) (.*)$/;

/** Go's RFC3339Nano back to integer nanoseconds since the epoch, as a string. */
function nanos(rfc3339: string): string {
  const [whole, fraction = ""] = rfc3339.slice(0, -1).split(".");
  return (BigInt(Date.parse(`${whole}Z`)) * 1_000_000n + BigInt(fraction.padEnd(9, "0"))).toString();
}

async function gpusynth(...args: string[]) {
  const { output, text } = captureOutput();
  const code = await main(args, output);
  return { code, ...text };
}

/** 40 offline minutes of the lab's scheduler log as pod log files under `podLogs`, rotated at 256 KiB. */
async function labPodLogs(podLogs: string, ...options: string[]) {
  const run = await gpusynth(
    "run",
    "--offline",
    "--duration",
    "40m",
    "--log-sources",
    "scheduler",
    ...options,
    "--pod-logs",
    podLogs,
    "--container-log-max-size",
    "256Ki",
    repoFile("blueprints/lab.yaml"),
  );
  expect(run.code, run.err).toBe(0);
}

/** The one container directory under a pod log root (the scheduler's). */
function containerDir(podLogs: string): string {
  const pod = readdirSync(podLogs)[0] as string;
  return join(podLogs, pod, readdirSync(join(podLogs, pod))[0] as string);
}

describe("gpusynth run --offline --pod-logs", () => {
  const keepAll = join(dir, "all");
  const rotated = join(dir, "rotated");
  const pushed = join(dir, "logs.jsonl");
  beforeAll(async () => {
    // Every rotated file kept: the files hold the whole run.
    await labPodLogs(keepAll, "--otlp-json-logs", pushed, "--container-log-max-files", "1000");
    // The kubelet's count of files: the oldest go.
    await labPodLogs(rotated, "--container-log-max-files", "3");
  });

  it("puts the scheduler's container log where the kubelet does: <namespace>_<pod>_<uid>/<container>/0.log", () => {
    const [first] = pushedLines(pushed);
    const r = first?.resource ?? {};
    expect(readdirSync(keepAll)).toEqual([`${r["k8s.namespace.name"]}_${r["k8s.pod.name"]}_${r["k8s.pod.uid"]}`]);
    const pod = readdirSync(keepAll)[0] as string;
    expect(readdirSync(join(keepAll, pod))).toEqual([r["k8s.container.name"]]);
    expect(readdirSync(join(keepAll, pod, r["k8s.container.name"] as string))).toContain("0.log");
  });

  it("writes every pushed line, in order, as a CRI line with the push's time and body", () => {
    const container = containerDir(keepAll);
    const written = containerFiles(container)
      .flatMap((name) => read(join(container, name)).split("\n").slice(0, -1))
      .map((line) => {
        const m = CRI_LINE.exec(line);
        return m === null ? { bad: line } : { timeUnixNano: nanos(m[1] as string), stream: m[2], tag: m[3], body: m[4] };
      });
    const lines = pushedLines(pushed);
    expect(lines.length).toBeGreaterThan(5000);
    expect(written).toEqual(lines.map(({ timeUnixNano, body }) => ({ timeUnixNano, stream: "stderr", tag: "F", body })));
  });

  it("rotates as the kubelet does: past the size, renamed with its time, all but the newest rotated file gzipped", () => {
    const container = containerDir(keepAll);
    const names = containerFiles(container);
    const rotatedNames = names.filter((n) => n !== "0.log");
    expect(rotatedNames.length).toBeGreaterThan(3);
    for (const name of rotatedNames) expect(name).toMatch(/^0\.log\.\d{8}-\d{6}(\.gz)?$/);
    expect(rotatedNames.filter((n) => !n.endsWith(".gz"))).toEqual([rotatedNames.at(-1)]);
    // Checked every 10 s: a file is rotated at the first check at or past 256 KiB, so it holds
    // at least that much and less than that plus 10 s of lines.
    for (const name of rotatedNames) expect(read(join(container, name)).length).toBeGreaterThanOrEqual(256 * 1024);
    // The file's name is the check's time, after its last line.
    const last = read(join(container, rotatedNames[0] as string))
      .trimEnd()
      .split("\n")
      .at(-1) as string;
    const stamp = (rotatedNames[0] as string).slice(6, 21);
    expect(stamp >= (last.slice(0, 19).replace(/[-:]/g, "").replace("T", "-") as string)).toBe(true);
  });

  it("keeps containerLogMaxFiles files, the live one included: the newest rotated ones", () => {
    const kept = containerFiles(containerDir(rotated));
    const all = containerFiles(containerDir(keepAll));
    expect(kept).toEqual(all.slice(-3));
    expect(kept.map((n) => n.replace(/\d{8}-\d{6}/, "<time>"))).toEqual(["0.log.<time>.gz", "0.log.<time>", "0.log"]);
  });

  it("looks at the files as often as containerLogMonitorInterval says: a rotation's time is one of its instants", async () => {
    const minutely = join(dir, "minutely");
    await labPodLogs(minutely, "--container-log-max-files", "1000", "--container-log-monitor-interval", "1m");
    const rotatedNames = containerFiles(containerDir(minutely)).filter((n) => n !== "0.log");
    const every10s = containerFiles(containerDir(keepAll)).filter((n) => n !== "0.log");
    expect(rotatedNames.length).toBeGreaterThan(3);
    // Checked once a minute: each rotation at a whole minute, fewer than checking every 10 s.
    expect(rotatedNames.filter((n) => !/^0\.log\.\d{8}-\d{4}00(\.gz)?$/.test(n))).toEqual([]);
    expect(rotatedNames.length).toBeLessThan(every10s.length);
  });

  it("refuses rotation settings without --pod-logs, and settings the kubelet refuses", async () => {
    const bad = [
      [["--container-log-max-size", "1Mi"], /--container-log-max-size applies to the files --pod-logs writes: add --pod-logs <dir>/],
      [
        ["--pod-logs", dir, "--container-log-max-files", "1"],
        /--container-log-max-files: expected an integer from 2 to 1000 \(the kubelet refuses fewer\), found "1"/,
      ],
      [
        ["--pod-logs", dir, "--container-log-max-size", "ten"],
        /--container-log-max-size: expected a size such as 10Mi, 512Ki or 1000000, found "ten"/,
      ],
    ] as const;
    const results = await Promise.all(bad.map(([args]) => gpusynth("run", "--offline", ...args)));
    expect(results.map((r) => [r.code, r.err.split("\n")[0]])).toEqual(bad.map(([, message]) => [2, expect.stringMatching(message)]));
  });
});
