/** validate warns — never fails — when a blueprint's rates fall far outside published ranges. */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type Blueprint, formatPath, loadBlueprint } from "../src/index.js";
import { plausibilityWarnings } from "../src/plausibility.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const lab = loadBlueprint(repo("blueprints/lab.yaml"));

describe("plausibility warnings", () => {
  it("are silent for every shipped blueprint", () => {
    for (const name of ["lab", "enterprise", "platform"]) {
      expect(loadBlueprint(repo(`blueprints/${name}.yaml`)).warnings, name).toEqual([]);
    }
    expect(lab.warnings).toEqual([]);
  });

  it("name the arrival rate when it exceeds 10 GPU workloads per GPU per day", () => {
    const busy: Blueprint = structuredClone(lab.blueprint);
    for (const g of busy.workloads) g.arrivals.perDay = 100;
    const [warning] = plausibilityWarnings(busy);
    expect(warning?.severity).toBe("warning");
    expect(formatPath(warning?.path ?? [])).toBe("workloads");
    expect(warning?.expected).toMatch(/at most 10 GPU workloads per GPU per day .*0\.5–2\.5/);
    expect(warning?.found).toBe("12.5 per GPU per day (400 a day on 32 GPUs)");
  });

  it("name the hazard rate when it exceeds 100× Llama 3's", () => {
    const faulty: Blueprint = structuredClone(lab.blueprint);
    faulty.faults.hazards = [{ category: "gpu", perGpuDay: 0.1, xid: 79 }];
    const [warning] = plausibilityWarnings(faulty);
    expect(formatPath(warning?.path ?? [])).toBe("faults.hazards");
    expect(warning?.found).toBe("0.1 per GPU-day (213× Llama 3)");
  });

  it("keep quiet at the edge of the published ranges", () => {
    const edge: Blueprint = structuredClone(lab.blueprint);
    for (const g of edge.workloads) g.arrivals.perDay = 80; // exactly 10 per GPU-day
    edge.faults.hazards = [{ category: "gpu", perGpuDay: 0.047, xid: 79 }];
    expect(plausibilityWarnings(edge)).toEqual([]);
  });
});
