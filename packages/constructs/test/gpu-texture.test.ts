/**
 * GPUs that differ, as a fleet's do: the statistics of an hour of lab.yaml scraped every 15 s
 * (after a day of warm-up), not single values. The GPUs of one job do not read alike, busy GPUs
 * touch 100 %, power is not a function of utilisation alone, idle GPUs differ in temperature and
 * PCIe chatter, a job's framebuffer moves over its life and differs between its ranks, and the
 * energy counter counts from the driver's load, days before the simulation started.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Sample } from "@gpusynth/constructs";
import { beforeAll, describe, expect, it } from "vitest";
import { allSamples } from "./family-index.js";

const lab = fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url));
const DAY = 86_400_000;
const SCRAPE = 15_000;

interface Reading {
  readonly t: number;
  readonly uuid: string;
  readonly pod: string | undefined;
  readonly util: number;
  readonly power: number;
  readonly temp: number;
  readonly fb: number;
  readonly pcie: number;
  readonly energy: number;
}

/** Every GPU's DCGM readings, scrape by scrape. */
const readings: Reading[] = [];
/** GPUs whose driver has not been re-initialised since the simulation started. */
const neverReset = new Set<string>();
/** Below any shipped model's idle draw: the energy check is a lower bound. */
const IDLE_WATTS = 40;

beforeAll(() => {
  const { blueprint } = loadBlueprint(lab);
  const schedule = every(SCRAPE, { fromMs: DAY, toMs: DAY + 3_600_000, atStart: true });
  drive(new ClusterRun(blueprint, { seed: 3, sources: ["dcgm-exporter"] }), schedule, (frame) => {
    const t = frame.simulatedMs;
    if (t === DAY)
      for (const pool of frame.view.pools)
        for (const node of pool.nodes) for (const gpu of node.gpus) if (gpu.initialisedAt === 0) neverReset.add(gpu.uuid);
    const samples = allSamples(frame.targets);
    const byGpu = new Map<string, Map<string, Sample>>();
    for (const s of samples) {
      if (!s.family.name.startsWith("DCGM_FI_")) continue;
      const uuid = s.labels.UUID as string;
      const gpu = byGpu.get(uuid) ?? new Map<string, Sample>();
      gpu.set(s.family.name, s);
      byGpu.set(uuid, gpu);
    }
    for (const [uuid, gpu] of byGpu) {
      const value = (name: string) => gpu.get(name)?.value ?? Number.NaN;
      readings.push({
        t,
        uuid,
        pod: gpu.get("DCGM_FI_DEV_GPU_UTIL")?.labels.pod,
        util: value("DCGM_FI_DEV_GPU_UTIL"),
        power: value("DCGM_FI_DEV_POWER_USAGE"),
        temp: value("DCGM_FI_DEV_GPU_TEMP"),
        fb: value("DCGM_FI_DEV_FB_USED"),
        pcie: value("DCGM_FI_PROF_PCIE_TX_BYTES"),
        energy: value("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
      });
    }
  });
});

/** Pearson correlation. */
function correlation(xs: readonly number[], ys: readonly number[]): number {
  const mean = (v: readonly number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const mx = mean(xs);
  const my = mean(ys);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < xs.length; i++) {
    const dx = (xs[i] as number) - mx;
    const dy = (ys[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxy / Math.sqrt(sxx * syy);
}

describe("GPU texture over an hour of lab.yaml", () => {
  it("does not read every GPU of a job alike: in most scrapes its GPUs show different utilisations", () => {
    // Pods of a workload: <workload>-<n>-<m>; GPUs of one pod share its pod label.
    const scrapes = new Map<string, number[]>();
    for (const r of readings) {
      if (r.pod === undefined) continue;
      const key = `${r.t} ${r.pod}`;
      scrapes.set(key, [...(scrapes.get(key) ?? []), r.util]);
    }
    const multi = [...scrapes.values()].filter((utils) => utils.length > 1);
    expect(multi.length).toBeGreaterThan(50);
    const alike = multi.filter((utils) => new Set(utils).size === 1).length;
    expect(alike / multi.length).toBeLessThan(0.3);
  });

  it("lets busy GPUs reach 100 % in some scrapes", () => {
    const busy = readings.filter((r) => r.util >= 70);
    expect(busy.length).toBeGreaterThan(100);
    const full = busy.filter((r) => r.util === 100).length;
    expect(full / busy.length).toBeGreaterThan(0.02);
    expect(full / busy.length).toBeLessThan(0.6);
  });

  it("draws power that follows utilisation without being a function of it", () => {
    const held = readings.filter((r) => r.pod !== undefined);
    const r = correlation(
      held.map((x) => x.util),
      held.map((x) => x.power),
    );
    expect(r).toBeGreaterThan(0.6);
    expect(r).toBeLessThan(0.97);
  });

  it("gives idle GPUs their own temperatures and PCIe chatter", () => {
    const at = readings.filter((r) => r.t === DAY + 1_800_000 && r.pod === undefined && r.util === 0);
    expect(at.length).toBeGreaterThan(3);
    expect(new Set(at.map((r) => r.temp)).size).toBeGreaterThan(2);
    expect(new Set(at.map((r) => r.pcie)).size).toBe(at.length);
  });

  it("moves a job's framebuffer over its life and differs between its ranks", () => {
    const byPod = new Map<string, Map<string, number[]>>();
    for (const r of readings) {
      if (r.pod === undefined) continue;
      const gpus = byPod.get(r.pod) ?? new Map<string, number[]>();
      gpus.set(r.uuid, [...(gpus.get(r.uuid) ?? []), r.fb]);
      byPod.set(r.pod, gpus);
    }
    const lives = [...byPod.values()].flatMap((gpus) => [...gpus.values()]).filter((fb) => fb.length >= 20);
    expect(lives.length).toBeGreaterThan(0);
    for (const fb of lives) expect(new Set(fb).size).toBeGreaterThan(1);
    const ranked = [...byPod.values()].filter((gpus) => gpus.size > 1);
    expect(ranked.length).toBeGreaterThan(0);
    for (const gpus of ranked) expect(new Set([...gpus.values()].map((fb) => fb[0])).size).toBeGreaterThan(1);
  });

  it("counts energy from the driver's load, at least a day of idle draw before the simulation's start", () => {
    const first = new Map<string, number>();
    for (const r of readings) if (!first.has(r.uuid) && neverReset.has(r.uuid)) first.set(r.uuid, r.energy);
    expect(first.size).toBeGreaterThan(20);
    // A day simulated plus at least a day before it, in millijoules.
    for (const [uuid, energy] of first) expect(energy, uuid).toBeGreaterThan(IDLE_WATTS * 2 * (DAY / 1000) * 1000);
  });
});
