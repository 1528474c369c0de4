/**
 * signals/volume.md states how many series and log records each shipped blueprint emits;
 * `gpusynth check-signals` (in `just check`) re-measures them (hyperscale when named). Here: the comparison itself
 * on lab's real run — it holds today, and it notices a drift, a new row and a missing one.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";
import { collectInventory } from "../src/inventory.js";
import { readVolumeMarkdown, VOLUME_RUN, volumeDrift, volumeMarkdown, volumeOf } from "../src/volume.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const documented = readVolumeMarkdown(readFileSync(repo("signals/volume.md"), "utf8"));
const labVolume = volumeOf(
  collectInventory(loadBlueprint(repo("blueprints/lab.yaml")).blueprint, VOLUME_RUN.durationMs, VOLUME_RUN.intervalMs),
);
const labRows = documented.get("lab") ?? new Map<string, number>();
const measuredRows = readVolumeMarkdown(volumeMarkdown([labVolume])).get("lab") ?? new Map<string, number>();

describe("signals/volume.md", () => {
  it("documents every shipped blueprint", () => {
    expect([...documented.keys()]).toEqual(["lab", "enterprise", "platform", "hyperscale"]);
  });

  it("matches what lab emits, within 10 %", () => {
    expect(volumeDrift(labRows, labVolume)).toEqual([]);
  });

  it("notices a figure that drifted, a row it no longer measures and one it does not document", () => {
    const row = "Active series per source: dcgm";
    const stated = labRows.get(row) as number;
    const drifted = new Map(labRows).set(row, Math.round(stated * 1.5)).set("Active series per source: made-up", 7);
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
