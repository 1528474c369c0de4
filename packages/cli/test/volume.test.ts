/**
 * signals/volume.md states how many series and log records each shipped blueprint emits;
 * `gpusynth check-signals` (in `just check`) re-measures them from each blueprint's volume run
 * (hyperscale when named). Here: the comparison itself, on two hours of lab's real run — it
 * notices a drift, a new row and a missing one.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";
import { collectInventory, mergeInventories } from "../src/inventory.js";
import { readVolumeMarkdown, volumeDrift, volumeMarkdown, volumeOf } from "../src/volume.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const documented = readVolumeMarkdown(readFileSync(repo("signals/volume.md"), "utf8"));
const labVolume = volumeOf(collectInventory(loadBlueprint(repo("blueprints/lab.yaml")).blueprint, 2 * 3_600_000, 600_000));
/** The page `just gen` would write for this run, read back. */
const measuredRows = readVolumeMarkdown(volumeMarkdown([labVolume])).get("lab") ?? new Map<string, number>();

describe("an inventory in two windows (check-signals' split of a large run, from three workers)", () => {
  it("is the inventory of the whole run: the same families, label keys, most series, jobs and log records", () => {
    const { blueprint } = loadBlueprint(repo("blueprints/scenarios/preemption-storm.yaml"));
    const whole = collectInventory(blueprint, 2 * 3_600_000, 600_000);
    const windows = mergeInventories(
      collectInventory(blueprint, 3_600_000, 600_000),
      collectInventory(blueprint, 2 * 3_600_000, 600_000, undefined, undefined, 3_600_000),
    );
    expect(whole.logs.reduce((n, l) => n + l.records, 0)).toBeGreaterThan(1_000);
    expect(windows).toEqual(whole);
  });
});

describe("signals/volume.md", () => {
  it("documents every shipped blueprint", () => {
    expect([...documented.keys()]).toEqual(["lab", "enterprise", "platform", "hyperscale"]);
  });

  it("reads back the page it writes: a run holds against its own figures", () => {
    expect(measuredRows.size).toBeGreaterThan(20);
    expect(volumeDrift(measuredRows, labVolume)).toEqual([]);
  });

  it("notices a figure that drifted, a row it no longer measures and one it does not document", () => {
    const row = "Active series per source: dcgm-exporter";
    const stated = measuredRows.get(row) as number;
    const drifted = new Map(measuredRows).set(row, Math.round(stated * 1.5)).set("Active series per source: made-up", 7);
    const missing = new Map(drifted);
    const dropped = [...missing.keys()].find((key) => key.startsWith("Log records per minute")) as string;
    missing.delete(dropped);
    expect(volumeDrift(missing, labVolume)).toEqual([
      `${row}: documented ${Math.round(stated * 1.5)}, measured ${measuredRows.get(row)}`,
      `${dropped}: measured ${measuredRows.get(dropped)}, not documented`,
      "Active series per source: made-up: documented, no longer measured",
    ]);
  });
});
