/**
 * A target's series are columns written over at each collect (catalogue.ts TargetSeries): a
 * series keeps its place and its label set, its value is this collect's, and a collect makes no
 * object per series. Then, on a real run: each target's columns are the same from one frame to the
 * next, nearly every place holding the same label set, and the frames a consumer keeps
 * (frameKept) keep the values of their instant.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, frameKept, type SeriesColumns } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { type MetricFamily, seriesLabels, TargetSeries } from "../src/catalogue.js";

const UTIL: MetricFamily = { id: "test.util", name: "test_util", type: "gauge", help: "", labels: ["gpu"] };
const ENERGY: MetricFamily = { id: "test.energy", name: "test_energy", type: "counter", help: "", labels: ["gpu"] };
const gpu = (index: number) => seriesLabels(UTIL, { gpu: String(index) });
/** What a collect listed, place by place. */
const listed = (series: SeriesColumns) =>
  Array.from({ length: series.count }, (_, at) => [
    series.families[at]?.name,
    series.labels[at]?.gpu,
    series.values[at],
    series.startAt(at),
  ]);

describe("a target's series", () => {
  it("are listed in their places with each collect's values, in the same columns from one collect to the next", () => {
    const series = new TargetSeries();
    const [g0, g1, g2] = [gpu(0), gpu(1), gpu(2)];
    series.begin();
    series.add(UTIL, g0, 10);
    series.add(UTIL, g1, 20);
    series.add(ENERGY, g0, 5, 1_000);
    const first = series.end();
    expect(listed(first)).toEqual([
      ["test_util", "0", 10, undefined],
      ["test_util", "1", 20, undefined],
      ["test_energy", "0", 5, 1_000],
    ]);
    // The label sets the source keeps, not copies: the encoders keep their bytes with them.
    expect(first.labels[0]).toBe(g0);

    // GPU 2 arrives between them, GPU 1 moves one place on, and the counter restarts.
    series.begin();
    series.add(UTIL, g0, 12.5);
    series.add(UTIL, g2, 30);
    series.add(UTIL, g1, 22);
    series.add(ENERGY, g0, 1, 9_000);
    const next = series.end();
    expect(next).toBe(first);
    expect(listed(next)).toEqual([
      ["test_util", "0", 12.5, undefined],
      ["test_util", "2", 30, undefined],
      ["test_util", "1", 22, undefined],
      ["test_energy", "0", 1, 9_000],
    ]);
    expect(next.samples().map((s) => [s.labels, s.value])).toEqual([
      [g0, 12.5],
      [g2, 30],
      [g1, 22],
      [g0, 1],
    ]);
  });

  it("list no more than the collect did, and hold no label set of a series that went", () => {
    const series = new TargetSeries();
    series.begin();
    for (let i = 0; i < 4; i++) series.add(UTIL, gpu(i), i);
    series.end();
    series.begin();
    series.add(UTIL, gpu(0), 100);
    const one = series.end();
    expect(listed(one)).toEqual([["test_util", "0", 100, undefined]]);
    expect([one.families.length, one.labels.length, one.values.length, one.starts.length]).toEqual([1, 1, 1, 1]);
  });
});

const lab = fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url));

describe("a run's series", () => {
  it("are each target's same columns from one scrape to the next, nearly every place with the same label set, and a kept frame keeps its instant's values", () => {
    const { blueprint } = loadBlueprint(lab);
    const schedule = [...every(15_000, { fromMs: 3_600_000, toMs: 3_900_000 })];
    let previous: Map<string, { series: SeriesColumns; labels: readonly object[] }> | undefined;
    let first: Frame | undefined;
    let same = 0;
    let places = 0;
    let sameColumns = 0;
    let targets = 0;
    drive(new ClusterRun(blueprint, { seed: 4 }), schedule, (frame) => {
      first ??= frameKept(frame);
      const now = new Map<string, { series: SeriesColumns; labels: readonly object[] }>();
      for (const t of frame.targets) {
        const series = t.series;
        if (series === undefined) throw new Error(`${t.target.job}: its series are not listed as columns`);
        const key = `${t.target.job}@${t.target.host}:${t.target.port}${t.target.path}`;
        now.set(key, { series, labels: series.labels.slice(0, series.count) });
        const before = previous?.get(key);
        if (before === undefined) continue;
        targets++;
        if (before.series === series) sameColumns++;
        for (let at = 0; at < series.count; at++) {
          places++;
          if (before.labels[at] === series.labels[at]) same++;
        }
      }
      previous = now;
    });
    expect(places).toBeGreaterThan(100_000);
    expect(sameColumns).toBe(targets);
    expect(same / places).toBeGreaterThan(0.99);
    // The first frame, kept through the run, shows what the same run stopped there shows.
    let alone: Frame | undefined;
    drive(new ClusterRun(blueprint, { seed: 4 }), schedule.slice(0, 1), (frame) => {
      alone = frameKept(frame);
    });
    const values = (f: Frame | undefined) => f?.targets.flatMap((t) => t.samples.map((s) => [s.family.name, s.labels, s.value]));
    expect(values(first)).toEqual(values(alone));
  });
});
