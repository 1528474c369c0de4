/**
 * A series keeps its label set from one scrape to the next while its subject lives: the same
 * object, which encoders keep the series' encoded attributes in (catalogue.ts KEPT_OTLP), so a
 * scrape writes what was kept instead of encoding every label again. kube-state-metrics, like the
 * real one, renders an object's families again when the object changes: its series may get new
 * label sets then, and only then.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";

const file = (path: string) => fileURLToPath(new URL(`../../../blueprints/${path}`, import.meta.url));
const SCRAPE_MS = 15_000;

interface Seen {
  readonly labels: object;
  /** The kube-state-metrics object the series describes (its uid, else its node or namespace), if any. */
  readonly object: string | undefined;
}

/** Every series of a frame by target, family and labels (as text), with its label set object. */
function seriesOf(frame: Frame): { series: Map<string, Seen>; objects: Map<string, string[]> } {
  const series = new Map<string, Seen>();
  // What each kube-state-metrics object shows (its series and their values): changed or not.
  const objects = new Map<string, string[]>();
  for (const { target, samples } of frame.targets)
    for (const s of samples) {
      const key = `${target.job}@${target.host}:${target.port} ${s.family.name}${JSON.stringify(s.labels)}`;
      const object = target.job === "kube-state-metrics" ? (s.labels.uid ?? s.labels.node ?? s.labels.namespace ?? undefined) : undefined;
      series.set(key, { labels: s.labels, object });
      if (object !== undefined) {
        const shown = objects.get(object) ?? [];
        shown.push(`${key} ${s.value}`);
        objects.set(object, shown);
      }
    }
  return { series, objects };
}

/** Series present in consecutive scrapes whose label set is a new object, where nothing allows it; and how many were compared. */
function newLabelSets(path: string, hours: number): { problems: string[]; compared: number } {
  const { blueprint } = loadBlueprint(file(path));
  const problems: string[] = [];
  let compared = 0;
  let previous: ReturnType<typeof seriesOf> | undefined;
  drive(new ClusterRun(blueprint, { seed: 3 }), every(SCRAPE_MS, { toMs: hours * 3_600_000 }), (frame) => {
    const now = seriesOf(frame);
    if (previous !== undefined)
      for (const [key, seen] of now.series) {
        const before = previous.series.get(key);
        if (before === undefined) continue;
        compared++;
        if (before.labels === seen.labels) continue;
        const object = seen.object;
        const changed = object !== undefined && previous.objects.get(object)?.join("\n") !== now.objects.get(object)?.join("\n");
        if (!changed && problems.length < 5) problems.push(`${frame.simulatedMs} ms: ${key} has a new label set`);
      }
    previous = now;
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
