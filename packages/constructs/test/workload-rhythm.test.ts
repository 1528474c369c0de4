/**
 * Workloads keep their own time, as people and jobs do: forty notebooks and twenty 4-GPU training
 * jobs started at random moments, their GPUs read every 15 s for six hours through the GPU model.
 * Notebooks are used in sessions of cells and thinking, not switched on and off on shared
 * five-minute boundaries; training reads near saturation with a spread (communication, evaluation),
 * not a square wave, and every GPU of a job stops together while a checkpoint is written.
 */
import { GPU_MODELS, type WorkloadType } from "@gpusynth/blueprint";
import { GpuActivityModel, GpuTimelines, ImagePulls, rhythmOf } from "@gpusynth/constructs";
import { beforeAll, describe, expect, it } from "vitest";

const HOUR = 3_600_000;
const SCRAPE = 15_000;
const FIVE_MINUTES = 300_000;

interface Reading {
  readonly t: number;
  readonly pod: string;
  readonly gpu: string;
  readonly type: WorkloadType;
  readonly util: number;
}

const readings: Reading[] = [];

beforeAll(() => {
  const timelines = new GpuTimelines(new ImagePulls(new Map()));
  const gpus: { uuid: string; pod: string; type: WorkloadType }[] = [];
  const start = (type: WorkloadType, uid: string, ranks: number, from: number) => {
    for (let rank = 0; rank < ranks; rank++) {
      const uuid = `GPU-${uid}-${rank}`;
      // Ranks start a few seconds apart, as their pods' containers do.
      const of = { workloadUid: uid, type, rank, from: from + rank * 3_000 };
      timelines.add(uuid, { of, podUid: uid, rhythm: rhythmOf(of), intensity: 1, to: Number.POSITIVE_INFINITY });
      gpus.push({ uuid, pod: uid, type });
    }
  };
  for (let i = 0; i < 40; i++) start("interactive", `notebook-${i}`, 1, i * 97_000);
  for (let i = 0; i < 20; i++) start("distributed-training", `train-${i}`, 4, i * 131_000);
  const activity = new GpuActivityModel(timelines);
  for (let t = HOUR; t <= 7 * HOUR; t += SCRAPE)
    for (const g of gpus)
      readings.push({
        t,
        pod: g.pod,
        gpu: g.uuid,
        type: g.type,
        util: activity.read({ uuid: g.uuid, initialisedAt: 0 }, GPU_MODELS["H100-80GB-HBM3"], t).gpuUtil,
      });
});

/** Each GPU's readings of one kind of workload, in time order. */
function series(type: WorkloadType): Map<string, Reading[]> {
  const byGpu = new Map<string, Reading[]>();
  for (const r of readings) {
    if (r.type !== type) continue;
    const key = `${r.pod} ${r.gpu}`;
    byGpu.set(key, [...(byGpu.get(key) ?? []), r]);
  }
  return byGpu;
}

describe("workload rhythm over six hours", () => {
  it("uses notebooks in sessions: bursts of many lengths, starting at any time, mostly idle", () => {
    const starts: number[] = [];
    const lengths: number[] = [];
    for (const rs of series("interactive").values()) {
      let since: number | undefined;
      for (const [i, r] of rs.entries()) {
        const before = rs[i - 1];
        if (before === undefined || before.t !== r.t - SCRAPE) continue;
        if (before.util === 0 && r.util > 0) {
          since = r.t;
          starts.push(r.t);
        }
        if (before.util > 0 && r.util === 0 && since !== undefined) lengths.push(r.t - since);
      }
    }
    expect(starts.length).toBeGreaterThan(20);
    // A fifth of the scrapes fall on a five-minute boundary: starts there are chance, not a grid.
    expect(starts.filter((t) => t % FIVE_MINUTES === 0).length / starts.length).toBeLessThan(0.4);
    expect(new Set(lengths).size).toBeGreaterThan(5);
    const utils = readings.filter((r) => r.type === "interactive").map((r) => r.util);
    const mean = utils.reduce((a, b) => a + b, 0) / utils.length;
    // PAI 2020: per-instance mean GPU utilisation 10.5 %, median 1.5 %.
    expect(mean).toBeGreaterThan(1);
    expect(mean).toBeLessThan(15);
    expect(utils.filter((u) => u === 0).length / utils.length).toBeGreaterThan(0.7);
  });

  it("reads training near saturation with a spread below it, not a square wave with a hole", () => {
    const busy = readings.filter((r) => r.type !== "interactive" && r.type !== "inference" && r.util > 0).map((r) => r.util);
    expect(busy.length).toBeGreaterThan(500);
    const sorted = [...busy].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeGreaterThanOrEqual(93);
    // Every 5-point band from 75 to 100 holds readings.
    for (let lo = 75; lo < 100; lo += 5)
      expect(
        busy.some((u) => u >= lo && u < lo + 5),
        `band ${lo}–${lo + 5}`,
      ).toBe(true);
  });

  it("stops every GPU of a training job together while a checkpoint is written", () => {
    const byScrape = new Map<string, number[]>();
    for (const r of readings) {
      if (r.type !== "training" && r.type !== "distributed-training") continue;
      const key = `${r.t} ${r.pod}`;
      byScrape.set(key, [...(byScrape.get(key) ?? []), r.util]);
    }
    const multi = [...byScrape.values()].filter((utils) => utils.length > 1);
    const allIdle = multi.filter((utils) => utils.every((u) => u === 0)).length;
    const someIdle = multi.filter((utils) => utils.some((u) => u === 0) && utils.some((u) => u > 0)).length;
    expect(allIdle).toBeGreaterThan(0);
    expect(someIdle).toBeLessThan(allIdle);
  });
});
