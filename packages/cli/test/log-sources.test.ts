/**
 * Choosing the logs: only Kubernetes events, only the scheduler's log, and the scheduler's
 * verbosity from the command line — and a clear refusal where the choice would do nothing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { captureOutput, repoFile } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "gpusynth-log-sources-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const storm = repoFile("blueprints/scenarios/preemption-storm.yaml");

/** The log records an offline run writes with `flags`: their body and whether the filelog receiver (the scheduler) wrote them. */
async function records(name: string, ...flags: string[]): Promise<Array<{ body: string; scheduler: boolean }>> {
  const file = join(dir, name);
  const { output, text } = captureOutput();
  expect(await main(["run", "--offline", "--duration", "10m", "--otlp-json-logs", file, ...flags, storm], output), text.err).toBe(0);
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .flatMap((line) => {
      const request = JSON.parse(line) as {
        resourceLogs: Array<{
          scopeLogs: Array<{ logRecords: Array<{ body: { stringValue: string }; attributes: Array<{ key: string }> }> }>;
        }>;
      };
      return request.resourceLogs.flatMap((rl) =>
        rl.scopeLogs.flatMap((sl) =>
          sl.logRecords.map((r) => ({ body: r.body.stringValue, scheduler: r.attributes.some((a) => a.key === "log.file.path") })),
        ),
      );
    });
}

describe("--log-sources and --scheduler-verbosity", () => {
  it("keeps only the Kubernetes events, or only the scheduler's log", async () => {
    const both = await records("both.jsonl");
    const events = await records("events.jsonl", "--log-sources", "events");
    const scheduler = await records("scheduler.jsonl", "--log-sources", "scheduler");
    expect(both.some((r) => r.scheduler) && both.some((r) => !r.scheduler)).toBe(true);
    expect(events).toEqual(both.filter((r) => !r.scheduler));
    expect(scheduler).toEqual(both.filter((r) => r.scheduler));
  }, 60_000);

  it("writes only a cycle's start and end at --scheduler-verbosity 1", async () => {
    const lines = await records("v1.jsonl", "--log-sources", "scheduler", "--scheduler-verbosity", "1");
    expect(lines.length).toBeGreaterThan(0);
    expect(new Set(lines.map((r) => r.body.replace(/^.*\] /, "")))).toEqual(new Set(["Start scheduling ...", "End scheduling ..."]));
  }, 60_000);

  it.each([
    [
      ["--offline", "--log-sources", "pods", "--otlp-json-logs", "x.jsonl"],
      /--log-sources: expected events, scheduler or events,scheduler, found "pods"/,
    ],
    [["--offline", "--log-sources", "events"], /--log-sources: no log goes anywhere in this run/],
    [
      ["--offline", "--scheduler-verbosity", "11", "--logs", "console"],
      /--scheduler-verbosity: expected an integer from 0 to 10, found "11"/,
    ],
  ])("refuses %j with exit code 2 and says why", async (flags, message) => {
    const { output, text } = captureOutput();
    expect(await main(["run", ...flags, "--duration", "1m", storm], output)).toBe(2);
    expect(text.err).toMatch(message);
  });
});
