/**
 * A series keeps its label set from one scrape to the next while its subject lives: the same
 * object, which encoders keep the series' encoded attributes in (catalogue.ts KEPT_OTLP), so a
 * scrape writes what was kept instead of encoding every label again. kube-state-metrics, like the
 * real one, renders an object's families again when the object changes: its series may get new
 * label sets then, and only then.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, frameKept, type Sample, type TargetSamples } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";

const file = (path: string) => fileURLToPath(new URL(`../../../blueprints/${path}`, import.meta.url));
const SCRAPE_MS = 15_000;

const seriesKey = ({ target }: TargetSamples, s: Sample) =>
  `${target.job}@${target.host}:${target.port} ${s.family.name}${JSON.stringify(s.labels)}`;

/** The kube-state-metrics object a series describes (its uid, else its node or namespace), if any. */
const objectOf = ({ target }: TargetSamples, s: Sample) =>
  target.job === "kube-state-metrics" ? (s.labels.uid ?? s.labels.node ?? s.labels.namespace) : undefined;

/** What each kube-state-metrics object of a frame shows: its series and their values. */
function objectsShown(frame: Frame): Map<string, string> {
  const shown = new Map<string, string>();
  for (const t of frame.targets)
    for (const s of t.samples) {
      const object = objectOf(t, s);
      if (object !== undefined) shown.set(object, `${shown.get(object) ?? ""}${seriesKey(t, s)} ${s.value}\n`);
    }
  return shown;
}

/**
 * Series present in consecutive scrapes whose label set is a new object where nothing allows it,
 * and how many series were compared. A label set met in the scrape before is kept; only the others
 * are looked up by their text (a new series, or a kept one with a new label set).
 */
function newLabelSets(path: string, hours: number): { problems: string[]; compared: number } {
  const { blueprint } = loadBlueprint(file(path));
  const problems: string[] = [];
  let compared = 0;
  let previous: Frame | undefined;
  drive(new ClusterRun(blueprint, { seed: 3 }), every(SCRAPE_MS, { toMs: hours * 3_600_000 }), (frame) => {
    const before = previous;
    // Kept as it is now: the next frame sets its samples' values again.
    previous = frameKept(frame);
    if (before === undefined) return;
    const kept = new Set<object>(before.targets.flatMap((t) => t.samples.map((s) => s.labels)));
    let keysBefore: Set<string> | undefined;
    let shown: { before: Map<string, string>; now: Map<string, string> } | undefined;
    for (const t of frame.targets)
      for (const s of t.samples) {
        if (kept.has(s.labels)) {
          compared++;
          continue;
        }
        keysBefore ??= new Set(before.targets.flatMap((b) => b.samples.map((p) => seriesKey(b, p))));
        const key = seriesKey(t, s);
        if (!keysBefore.has(key)) continue; // a new series
        compared++;
        const object = objectOf(t, s);
        shown ??= { before: objectsShown(before), now: objectsShown(frame) };
        const changed = object !== undefined && shown.before.get(object) !== shown.now.get(object);
        if (!changed && problems.length < 5) problems.push(`${frame.simulatedMs} ms: ${key} has a new label set`);
      }
  });
  return { problems, compared };
}

describe("a series' label set", () => {
  it.each([
    ["lab.yaml", 0.5],
    ["scenarios/preemption-storm.yaml", 1],
    ["scenarios/crash-loop.yaml", 1],
  ])("is the same object scrape after scrape in %s, but for a kube-state-metrics object that changed", (path, hours) => {
    const { problems, compared } = newLabelSets(path, hours);
    expect(problems).toEqual([]);
    expect(compared).toBeGreaterThan(100_000);
  });
});
