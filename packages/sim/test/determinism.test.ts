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
 * The event log's bytes, hashed a chunk at a time: each event's JSON line, exactly as
 * `JSON.stringify(event)` and a newline write it (scripts/gen-golden.mjs hashes that), copied into
 * a 1 MiB buffer that is hashed whenever it fills. A scheduling cycle lists every pending job's
 * attempt and every queue, and repeats the objects of those that did not change from one cycle to
 * the next (most of the stress fixture's 110 MB a day): each such object's text is encoded once
 * and its bytes copied again. Hashing each line's text instead cost more than the simulation: the
 * cycle's text built by concatenation, then flattened and encoded again by `hash.update`.
 */
class EventLogHash {
  private readonly hash = createHash("sha256");
  private readonly chunk = Buffer.allocUnsafe(2 ** 20);
  private at = 0;
  private readonly encoded = new WeakMap<object, Buffer>();
  private static readonly text = new Map<string, Buffer>();

  add(event: DomainEvent): void {
    if (event.kind !== "SchedulingCycle") {
      this.putText(JSON.stringify(event));
    } else {
      let first = true;
      for (const [key, value] of Object.entries(event)) {
        if (value === undefined) continue;
        this.put(EventLogHash.bytes(first ? "{" : ","));
        first = false;
        this.put(EventLogHash.bytes(`${JSON.stringify(key)}:`));
        if (!Array.isArray(value)) {
          this.putText(JSON.stringify(value));
          continue;
        }
        this.put(EventLogHash.bytes("["));
        value.forEach((item: unknown, i) => {
          if (i > 0) this.put(EventLogHash.bytes(","));
          this.putItem(item);
        });
        this.put(EventLogHash.bytes("]"));
      }
      this.put(EventLogHash.bytes("}"));
    }
    this.put(EventLogHash.bytes("\n"));
  }

  digest(): string {
    this.hash.update(this.chunk.subarray(0, this.at));
    return this.hash.digest("hex");
  }

  /** A list's item: an object's bytes are encoded once and kept while the simulation keeps it. */
  private putItem(item: unknown): void {
    if (typeof item !== "object" || item === null) {
      this.putText(JSON.stringify(item));
      return;
    }
    let bytes = this.encoded.get(item);
    if (bytes === undefined) {
      bytes = Buffer.from(JSON.stringify(item), "utf8");
      this.encoded.set(item, bytes);
    }
    this.put(bytes);
  }

  private putText(text: string): void {
    // At most three bytes per UTF-16 unit.
    if (text.length * 3 > this.chunk.length - this.at) this.flush();
    if (text.length * 3 > this.chunk.length) this.hash.update(text);
    else this.at += this.chunk.write(text, this.at, "utf8");
  }

  private put(bytes: Uint8Array): void {
    if (bytes.length > this.chunk.length - this.at) this.flush();
    if (bytes.length > this.chunk.length) this.hash.update(bytes);
    else {
      this.chunk.set(bytes, this.at);
      this.at += bytes.length;
    }
  }

  private flush(): void {
    this.hash.update(this.chunk.subarray(0, this.at));
    this.at = 0;
  }

  /** The punctuation's and keys' bytes, made once. */
  private static bytes(text: string): Buffer {
    let bytes = EventLogHash.text.get(text);
    if (bytes === undefined) {
      bytes = Buffer.from(text, "utf8");
      EventLogHash.text.set(text, bytes);
    }
    return bytes;
  }
}

/** The event log's hash, taken as the events come: the log is never held (the stress fixture's is over 100 MB). */
function eventLogHash(file: string, days: number, seed?: number): string {
  const simulation = new Simulation(loadBlueprint(repoFile(file)).blueprint, seed === undefined ? {} : { seed });
  const log = new EventLogHash();
  simulation.onEvent((event) => log.add(event));
  simulation.runUntil(days * DAY);
  return log.digest();
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
