/**
 * A target's series keep their Sample from one collect to the next (catalogue.ts TargetSeries):
 * a series in its place gets its new value in the same object, a series that arrives or moves
 * gets one of its own, and what a collect listed stays as it was until the target's next
 * collect. Then, on a real run: a steady cluster's collect lists the same objects again, and the
 * frames a consumer keeps (frameKept) keep the values of their instant.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, frameKept, type Sample } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { type MetricFamily, seriesLabels, TargetSeries } from "../src/catalogue.js";

const UTIL: MetricFamily = { id: "test.util", name: "test_util", type: "gauge", help: "", labels: ["gpu"] };
const ENERGY: MetricFamily = { id: "test.energy", name: "test_energy", type: "counter", help: "", labels: ["gpu"] };
const gpu = (index: number) => seriesLabels(UTIL, { gpu: String(index) });

describe("a target's series", () => {
  it("keep their sample in place, with each collect's value, and give a series that arrives or moves a new one", () => {
    const series = new TargetSeries();
    const [g0, g1, g2] = [gpu(0), gpu(1), gpu(2)];
    series.begin();
    series.add(UTIL, g0, 10);
    series.add(UTIL, g1, 20);
    series.add(ENERGY, g0, 5, 1_000);
    const listed = [...series.end()];
    series.begin();
    series.add(UTIL, g0, 11);
    series.add(UTIL, g1, 21);
    series.add(ENERGY, g0, 6, 1_000);
    const next = series.end();
    // The same objects, with the new values.
    expect(next).toHaveLength(3);
    for (let i = 0; i < 3; i++) expect(next[i]).toBe(listed[i]);
    expect(next.map((s) => s.value)).toEqual([11, 21, 6]);

    // GPU 2 arrives between them, GPU 1 moves one place on, and the counter restarts: each a new
    // sample, the values all this collect's.
    series.begin();
    series.add(UTIL, g0, 12);
    series.add(UTIL, g2, 30);
    series.add(UTIL, g1, 22);
    series.add(ENERGY, g0, 1, 9_000);
    const moved = series.end();
    expect(moved[0]).toBe(listed[0]);
    for (const i of [1, 2, 3]) expect(listed).not.toContain(moved[i]);
    expect(moved.map((s) => [s.labels.gpu, s.value, s.startMs])).toEqual([
      ["0", 12, undefined],
      ["2", 30, undefined],
      ["1", 22, undefined],
      ["0", 1, 9_000],
    ]);
  });

  it("leave what a collect listed as it was until the target's next collect, and list no more than the collect did", () => {
    const series = new TargetSeries();
    series.begin();
    for (let i = 0; i < 4; i++) series.add(UTIL, gpu(i), i);
    const four = series.end();
    series.begin();
    series.add(UTIL, gpu(0), 100);
    // The collect in progress has not touched the last one's list.
    expect(four.map((s) => s.labels.gpu)).toEqual(["0", "1", "2", "3"]);
    const one = series.end();
    expect(one).toHaveLength(1);
    expect(one).not.toBe(four);
  });
});

const lab = fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url));

describe("a run's samples", () => {
  it("are the same objects from one scrape to the next for almost every series, and a kept frame keeps its instant's values", () => {
    const { blueprint } = loadBlueprint(lab);
    const schedule = [...every(15_000, { fromMs: 3_600_000, toMs: 3_900_000 })];
    let previous: Frame | undefined;
    let first: Frame | undefined;
    let same = 0;
    let listed = 0;
    drive(new ClusterRun(blueprint, { seed: 4 }), schedule, (frame) => {
      first ??= frameKept(frame);
      if (previous !== undefined) {
        const before = new Set<Sample>(previous.targets.flatMap((t) => t.samples));
        for (const t of frame.targets)
          for (const s of t.samples) {
            listed++;
            if (before.has(s)) same++;
          }
      }
      previous = frame;
    });
    expect(listed).toBeGreaterThan(100_000);
    expect(same / listed).toBeGreaterThan(0.99);
    // The first frame, kept through the run, shows what the same run stopped there shows.
    let alone: Frame | undefined;
    drive(new ClusterRun(blueprint, { seed: 4 }), schedule.slice(0, 1), (frame) => {
      alone = frameKept(frame);
    });
    const values = (f: Frame | undefined) => f?.targets.flatMap((t) => t.samples.map((s) => [s.family.name, s.labels, s.value]));
    expect(values(first)).toEqual(values(alone));
  });
});
