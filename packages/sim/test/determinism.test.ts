import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DAY, fixture, repoFile, run } from "./helpers.js";

function eventLogHash(file: string, seed?: number): string {
  const { events } = run(file, 3 * DAY, seed);
  const hash = createHash("sha256");
  for (const event of events) hash.update(`${JSON.stringify(event)}\n`);
  return hash.digest("hex");
}

describe.each([
  ["lab blueprint", repoFile("blueprints/lab.yaml")],
  ["stress fixture", fixture("stress.yaml")],
])("determinism: %s", (_name, file) => {
  it("gives the identical event log for the same blueprint and seed", () => {
    expect(eventLogHash(file)).toBe(eventLogHash(file));
    expect(eventLogHash(file, 42)).toBe(eventLogHash(file, 42));
  });

  it("gives a different event log for another seed", () => {
    expect(eventLogHash(file, 42)).not.toBe(eventLogHash(file, 43));
  });
});
