/**
 * signals/volume.md states how many series and log records each shipped blueprint emits; a
 * fresh measurement must agree within 10 % (or one series, for small counts).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";
import { measureVolume, readVolumeMarkdown, volumeMarkdown } from "../src/volume.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const documented = readVolumeMarkdown(readFileSync(repo("signals/volume.md"), "utf8"));
const TOLERANCE = 0.1;

describe("signals/volume.md", () => {
  it("documents every shipped blueprint", () => {
    expect([...documented.keys()]).toEqual(["lab", "enterprise", "platform"]);
  });

  it.each(["lab", "enterprise", "platform"])(
    "matches what %s emits, within 10 %",
    (name) => {
      const measured = readVolumeMarkdown(volumeMarkdown([measureVolume(loadBlueprint(repo(`blueprints/${name}.yaml`)).blueprint)])).get(
        name,
      );
      const stated = documented.get(name);
      expect(measured).toBeDefined();
      expect([...(measured as Map<string, number>).keys()].sort()).toEqual([...(stated as Map<string, number>).keys()].sort());
      const off: string[] = [];
      for (const [row, value] of measured as Map<string, number>) {
        const doc = stated?.get(row) as number;
        if (Math.abs(value - doc) > Math.max(1, TOLERANCE * doc)) off.push(`${row}: documented ${doc}, measured ${value}`);
      }
      expect(off).toEqual([]);
    },
    120_000,
  );

  it("reads back what it writes, and would notice a drift", () => {
    const table = readVolumeMarkdown("## Active series per source\n\n| source | lab |\n| --- | --- |\n| dcgm | 640 |\n");
    expect(table.get("lab")?.get("Active series per source: dcgm")).toBe(640);
  });
});
