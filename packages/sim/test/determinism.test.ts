/**
 * Same blueprint and seed → the same event sequence, in any process: each subject's event log
 * (over the days golden/event-logs.json gives it) is hashed once and compared with the hash committed in golden/event-logs.json (written by
 * `just gen`). A change in what the simulation does fails here until it is regenerated on purpose.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadBlueprint } from "@gpusynth/blueprint";
import { Simulation } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";
import { DAY, repoFile } from "./helpers.js";

const golden = JSON.parse(readFileSync(new URL("./golden/event-logs.json", import.meta.url), "utf8")) as Record<
  string,
  { readonly days: number; readonly seeds: Record<string, string> }
>;

/** Each event's JSON line, hashed as it comes: the log is never held (the stress fixture's is over 100 MB). */
function eventLogHash(file: string, days: number, seed?: number): string {
  const simulation = new Simulation(loadBlueprint(repoFile(file)).blueprint, seed === undefined ? {} : { seed });
  const hash = createHash("sha256");
  simulation.onEvent((event) => hash.update(`${JSON.stringify(event)}\n`));
  simulation.runUntil(days * DAY);
  return hash.digest("hex");
}

describe.each(Object.entries(golden))("determinism: %s", (file, { days, seeds }) => {
  const hashes = new Map<string, string>();
  const hashOf = (seed: string) => {
    let hash = hashes.get(seed);
    if (hash === undefined) {
      hash = eventLogHash(file, days, seed === "default" ? undefined : Number(seed));
      hashes.set(seed, hash);
    }
    return hash;
  };

  it.each(Object.keys(seeds))("gives the committed event log at seed %s (regenerate with `just gen` if the change is intended)", (seed) => {
    expect(hashOf(seed)).toBe(seeds[seed]);
  });

  it("gives a different event log for another seed", () => {
    expect(hashOf("42")).not.toBe(hashOf("43"));
  });
});
