/**
 * Same blueprint and seed → the same event sequence, in any process: each subject's event log
 * (over the days golden/event-logs.json gives it) is hashed once and compared with the hash committed in golden/event-logs.json (written by
 * `just gen`). A change in what the simulation does fails here until it is regenerated on purpose.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadBlueprint } from "@gpusynth/blueprint";
import { type DomainEvent, Simulation } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";
import { DAY, repoFile } from "./helpers.js";

const golden = JSON.parse(readFileSync(new URL("./golden/event-logs.json", import.meta.url), "utf8")) as Record<
  string,
  { readonly days: number; readonly seeds: Record<string, string> }
>;

/**
 * An event's JSON, exactly as JSON.stringify writes it (scripts/gen-golden.mjs hashes that). A
 * scheduling cycle lists every pending job's attempt and every queue, and repeats the objects of
 * those that did not change from one cycle to the next: each such object is written once and its
 * text reused — most of the stress fixture's 110 MB a day.
 */
const written = new WeakMap<object, string>();
function eventJson(event: DomainEvent): string {
  if (event.kind !== "SchedulingCycle") return JSON.stringify(event);
  const parts: string[] = [];
  for (const [key, value] of Object.entries(event)) {
    if (value === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${Array.isArray(value) ? `[${value.map(objectJson).join(",")}]` : JSON.stringify(value)}`);
  }
  return `{${parts.join(",")}}`;
}
function objectJson(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  let text = written.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    written.set(value, text);
  }
  return text;
}

/** Each event's JSON line, hashed as it comes: the log is never held (the stress fixture's is over 100 MB). */
function eventLogHash(file: string, days: number, seed?: number): string {
  const simulation = new Simulation(loadBlueprint(repoFile(file)).blueprint, seed === undefined ? {} : { seed });
  const hash = createHash("sha256");
  simulation.onEvent((event) => hash.update(`${eventJson(event)}\n`));
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
