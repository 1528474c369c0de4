/**
 * dcgm-exporter's clock violation counters, which its default counters file ships commented out:
 * absent unless the blueprint enables them (telemetry.dcgmCounters, as a custom counters file
 * would), then after DCGM_FI_DEV_XID_ERRORS in the file's order, the power one growing exactly
 * while a GPU's clock sits below its maximum under load (held by the power cap), the thermal one
 * at 0.
 */
import { fileURLToPath } from "node:url";
import { type Blueprint, loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Sample, samplesKept } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";

const shipped = (name: string) => loadBlueprint(fileURLToPath(new URL(`../../../blueprints/${name}.yaml`, import.meta.url))).blueprint;
const lab = shipped("lab");
const MINUTE = 60_000;

/** dcgm-exporter's samples, per scrape a minute apart over two hours from hour 6, of an eighth of the nodes (a shard). */
function dcgmScrapes(blueprint: Blueprint): Sample[][] {
  const scrapes: Sample[][] = [];
  drive(
    new ClusterRun(blueprint, { shard: { index: 3, count: 8 }, sources: ["dcgm-exporter"] }),
    every(MINUTE, { fromMs: 6 * 60 * MINUTE, toMs: 8 * 60 * MINUTE }),
    (frame) => scrapes.push(samplesKept(frame.targets.flatMap((t) => (t.target.job === "nvidia-dcgm-exporter" ? t.samples : [])))),
  );
  return scrapes;
}

describe("dcgm-exporter's violation counters", () => {
  it("are left out by default, as the default counters file has them commented out", () => {
    const names = new Set(dcgmScrapes(lab).flatMap((s) => s.map((x) => x.family.name)));
    expect(names.has("DCGM_FI_DEV_SM_CLOCK")).toBe(true);
    expect(names.has("DCGM_FI_DEV_POWER_VIOLATION")).toBe(false);
    expect(names.has("DCGM_FI_DEV_THERMAL_VIOLATION")).toBe(false);
  });

  it("count, when enabled, the time the power cap held a GPU's clock, and no thermal limit", () => {
    // enterprise.yaml's custom counters file enables both; its H100s reach their power cap under training.
    const enterprise = shipped("enterprise");
    expect(enterprise.telemetry.dcgmCounters).toEqual(["DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_THERMAL_VIOLATION"]);
    const scrapes = dcgmScrapes(enterprise);
    // In the counters file's order: right after the XID field.
    const order = [...new Set((scrapes[0] as Sample[]).map((s) => s.family.name))];
    expect(order.slice(order.indexOf("DCGM_FI_DEV_XID_ERRORS"), order.indexOf("DCGM_FI_DEV_XID_ERRORS") + 3)).toEqual([
      "DCGM_FI_DEV_XID_ERRORS",
      "DCGM_FI_DEV_POWER_VIOLATION",
      "DCGM_FI_DEV_THERMAL_VIOLATION",
    ]);
    let heldMinutes = 0;
    let freeMinutes = 0;
    /** A scrape's values by family and GPU. */
    const valuesOf = (scrape: Sample[]) => new Map(scrape.map((s) => [`${s.family.name}/${s.labels.UUID}`, s.value]));
    const off: string[] = [];
    for (let i = 1; i < scrapes.length; i++) {
      const [before, now] = [valuesOf(scrapes[i - 1] as Sample[]), valuesOf(scrapes[i] as Sample[])];
      const value = (values: Map<string, number>, name: string, uuid: string) => values.get(`${name}/${uuid}`) ?? Number.NaN;
      for (const s of (scrapes[i] as Sample[]).filter((x) => x.family.name === "DCGM_FI_DEV_POWER_VIOLATION")) {
        const uuid = s.labels.UUID as string;
        const grewNs = s.value - value(before, "DCGM_FI_DEV_POWER_VIOLATION", uuid);
        if (!(grewNs >= 0 && grewNs <= MINUTE * 1e6)) off.push(`${uuid} at scrape ${i}: power violation grew by ${grewNs} ns in a minute`);
        const thermal = value(now, "DCGM_FI_DEV_THERMAL_VIOLATION", uuid);
        if (thermal !== 0) off.push(`${uuid} at scrape ${i}: thermal violation ${thermal}`);
        // A GPU whose clock reads below its maximum at the scrape is held by the cap at that instant.
        const clock = value(now, "DCGM_FI_DEV_SM_CLOCK", uuid);
        // (Idle clocks read 210 or 345 MHz; an H100 at full clock 1980.)
        if (clock < 1900 && clock > 400 && grewNs > 0) heldMinutes++;
        if (grewNs === 0) freeMinutes++;
      }
    }
    expect(off.slice(0, 5)).toEqual([]);
    expect(heldMinutes).toBeGreaterThan(0);
    expect(freeMinutes).toBeGreaterThan(0);
  });
});
