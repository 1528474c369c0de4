/**
 * signals/name-fidelity.md is generated from measurements (signals/receiver-names.json, written by
 * scripts/measure-receiver-names.mjs, which `just gen-check` reruns against the real collector,
 * Prometheus 3 and VictoriaMetrics): it must be what `gpusynth fidelity` prints from them, cover
 * every family gpusynth emits on every path, and show what a user of each path gets.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterMetrics } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { nameFidelityMarkdown, readReceiverNames } from "../src/commands/fidelity.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const blueprint = loadBlueprint(repo("blueprints/lab.yaml")).blueprint;
const measured = readReceiverNames();

describe("signals/name-fidelity.md", () => {
  it("is what gpusynth fidelity prints for the default blueprint (run `just gen` after a change)", () => {
    expect(readFileSync(repo("signals/name-fidelity.md"), "utf8")).toBe(nameFidelityMarkdown(blueprint));
  });

  it("has a measurement of every family gpusynth emits on every path, and of nothing else", () => {
    const families = new ClusterMetrics(blueprint)
      .families()
      .map((f) => f.name)
      .sort();
    expect(Object.keys(measured.paths).length).toBe(7);
    for (const [id, path] of Object.entries(measured.paths)) expect(Object.keys(path.families).sort(), id).toEqual(families);
  });

  it("keeps every vendor name and label on the shipped collector path and where suffixes are off", () => {
    const families = new ClusterMetrics(blueprint).families();
    for (const id of ["prw-shipped", "prom3-otlp-without-suffixes", "vm-default"])
      for (const family of families) expect(measured.paths[id]?.families[family.name]?.name, `${id} ${family.name}`).toBe(family.name);
    const text = nameFidelityMarkdown(blueprint);
    expect(text).toMatch(/Renamed: path 1: [1-9]\d*, path 2: 0, .*path 5: 0, path 6: 0, path 7: [1-9]\d* of \d+ families\./);
    expect(text).toMatch(/Labels changed: path 1: [1-9]\d*, path 2: 0, /);
  });

  it("shows the DCGM counters gaining _total where suffixes are on", () => {
    expect(nameFidelityMarkdown(blueprint)).toMatch(
      /\| `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` \| counter \| ✗ `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total`[^|]*\| same \|/,
    );
  });
});
