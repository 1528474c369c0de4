/**
 * A GPU reads the same at an instant whoever reads it and however often: three runs of one
 * blueprint and seed — scraped every 15 s, every 60 s, and once after an hour nobody read (as a
 * calibration sample is taken) — report identical DCGM values and Run:ai last-busy times at the
 * instants they share, and so do the containers' CPU and memory the kubelet's cAdvisor reports. Before GPU physics was a function of (GPU, time), temperatures and energy
 * integrated between reads, and the three disagreed.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";

const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url)));
const HOUR = 3_600_000;
const FROM = 6 * HOUR;

/**
 * Per instant a minute apart (the ones the readers share), every GPU-level sample of dcgm-exporter
 * and Run:ai's per-GPU families, keyed by series; the frames between are taken and not kept.
 */
function readEvery(intervalMs: number, fromMs: number): Map<number, Map<string, number>> {
  const byTime = new Map<number, Map<string, number>>();
  // A series keeps its label set from one frame to the next (families may share one): its key is
  // written once per family.
  const keys = new Map<string, WeakMap<object, string>>();
  const read = (frame: Frame) => {
    if (frame.simulatedMs % 60_000 !== 0) return;
    const values = new Map<string, number>();
    for (const target of frame.targets)
      for (const s of target.samples) {
        const read = s.family.name.startsWith("DCGM_FI_") || s.family.name.endsWith("_per_gpu") || s.family.name.startsWith("container_");
        if (!read || s.family.name === "container_last_seen") continue;
        let ofFamily = keys.get(s.family.name);
        if (ofFamily === undefined) {
          ofFamily = new WeakMap();
          keys.set(s.family.name, ofFamily);
        }
        let key = ofFamily.get(s.labels);
        if (key === undefined) {
          key = `${s.family.name}${JSON.stringify(s.labels)}`;
          ofFamily.set(s.labels, key);
        }
        values.set(key, s.value);
      }
    byTime.set(frame.simulatedMs, values);
  };
  drive(
    new ClusterRun(blueprint, { seed: 11, sources: ["dcgm-exporter", "runai", "kubelet"] }),
    every(intervalMs, { fromMs, toMs: FROM + 2 * HOUR, atStart: true }),
    read,
  );
  return byTime;
}

describe("GPU readings do not depend on who reads them, nor how often", () => {
  const fine = readEvery(15_000, FROM);
  const coarse = readEvery(60_000, FROM);
  const once = readEvery(HOUR, FROM + HOUR);

  it("agrees exactly at every instant a 15 s and a 60 s scrape share", () => {
    let compared = 0;
    for (const [t, values] of coarse) {
      expect(fine.get(t), `15 s scrape at ${t}`).toEqual(values);
      compared += values.size;
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it("gives a sample taken after an hour unread what the scrapes read at that instant", () => {
    const t = FROM + HOUR;
    const sample = once.get(t) as Map<string, number>;
    expect(sample.size).toBeGreaterThan(100);
    expect(sample).toEqual(fine.get(t));
    // The values compared move: temperatures, power and energy differ from the hour before.
    const before = fine.get(FROM) as Map<string, number>;
    const moved = [...sample].filter(([key, v]) => key.startsWith("DCGM_FI_DEV_TOTAL_ENERGY") && before.get(key) !== v);
    expect(moved.length).toBeGreaterThan(10);
  });
});
