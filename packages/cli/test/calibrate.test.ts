/**
 * gpusynth calibrate: the measured rates are what the simulation did (checked on scenarios whose
 * every workload is known), bands decide the exit code, and the shipped lab blueprint meets the
 * real-world targets it declares — CI runs this.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { afterAll, describe, expect, it } from "vitest";
import { measure, quantile } from "../src/calibration/measure.js";
import { main } from "../src/main.js";
import { captureOutput, eventsOf } from "./helpers.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const HOUR = 3_600_000;

describe("quantile", () => {
  it("takes the nearest rank", () => {
    expect(quantile([4, 1, 3, 2], 0.5)).toBe(2);
    expect(quantile([4, 1, 3, 2], 0.9)).toBe(4);
    expect(quantile([7], 0.1)).toBe(7);
    expect(quantile([], 0.5)).toBeUndefined();
  });
});

describe("measure", () => {
  it("counts arrivals, sizes and final status of the workloads that were submitted", () => {
    const file = "blueprints/scenarios/quota-exhaustion.yaml";
    const submitted = eventsOf(file, 6 * HOUR).flatMap((e) => (e.kind === "WorkloadSubmitted" ? [e.workload.gpus] : []));
    const m = measure(loadBlueprint(repo(file)).blueprint, 6 * HOUR, 0);
    expect(m.gpuWorkloadsPerGpuDay).toBeCloseTo(submitted.length / 16 / 0.25, 10);
    expect(m.gpusPerWorkloadMedian).toBe(quantile(submitted, 0.5));
    expect([m.completedShare, m.cancelledShare, m.failedShare]).toEqual([1, 0, 0]);
    expect(m.waitMedianSeconds).toBeGreaterThan(0);
  });

  it("counts preempted preemptible workloads and GPU faults per GPU-day", () => {
    const storm = "blueprints/scenarios/preemption-storm.yaml";
    const events = eventsOf(storm, 3 * HOUR);
    const preemptible = new Set(events.flatMap((e) => (e.kind === "WorkloadStarted" && e.workload.preemptible ? [e.workload.id] : [])));
    const preempted = new Set(events.flatMap((e) => (e.kind === "WorkloadPreempted" ? [e.workload.id] : [])));
    expect(measure(loadBlueprint(repo(storm)).blueprint, 3 * HOUR, 0).preemptedShare).toBeCloseTo(preempted.size / preemptible.size, 10);

    const fault = "blueprints/scenarios/gpu-fault.yaml";
    const faults = eventsOf(fault, 5 * HOUR).filter((e) => e.kind === "GpuFault").length;
    expect(faults).toBe(3);
    expect(measure(loadBlueprint(repo(fault)).blueprint, 5 * HOUR, 0).hardwareInterruptionsPerGpuDay).toBeCloseTo(
      faults / 16 / (5 / 24),
      10,
    );
  });

  it("leaves the warm-up out", () => {
    const file = "blueprints/scenarios/gpu-fault.yaml";
    const m = measure(loadBlueprint(repo(file)).blueprint, HOUR, 4 * HOUR);
    // Every submission and fault of the scenario happens in its first 4 hours.
    expect([m.gpuWorkloadsPerGpuDay, m.hardwareInterruptionsPerGpuDay]).toEqual([0, 0]);
  });
});

describe("gpusynth calibrate", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-calibrate-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes for the shipped lab blueprint: every rate within its real-world band", async () => {
    const { output, text } = captureOutput();
    expect(await main(["calibrate", repo("blueprints/lab.yaml")], output), text.out).toBe(0);
    expect(text.out).toContain("calibration: every measured rate is within its band");
    expect(text.out.match(/ pass\n/g)?.length).toBeGreaterThanOrEqual(14);
  }, 60_000);

  it("exits 1 and names the rates outside their bands", async () => {
    const strict = join(dir, "strict.yaml");
    const lab = readFileSync(repo("blueprints/lab.yaml"), "utf8")
      .replace("# yaml-language-server: $schema=./blueprint.schema.json", "")
      .replace(/meanAllocation: \{[^}]*\}/, "meanAllocation: { min: 0.99 }");
    writeFileSync(strict, lab);
    const { output, text } = captureOutput();
    expect(await main(["calibrate", strict, "--days", "2", "--json"], output)).toBe(1);
    const report = JSON.parse(text.out) as { passed: boolean; rows: Array<{ metric: string; verdict: string }> };
    expect(report.passed).toBe(false);
    expect(report.rows.filter((r) => r.verdict === "fail").map((r) => r.metric)).toContain("meanAllocation");
  }, 60_000);

  it.each([["0"], ["1.5.2"], ["a week"], ["400"]])("rejects --days %s with exit code 2", async (days) => {
    const { output, text } = captureOutput();
    expect(await main(["calibrate", "--days", days], output)).toBe(2);
    expect(text.err).toMatch(/--days: expected a number of days/);
  });
});
