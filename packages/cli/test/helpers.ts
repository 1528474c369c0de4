/** An Output that keeps what a command writes, for tests that run commands in-process. */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { type DomainEvent, Simulation } from "@gpusynth/sim";
import type { Output } from "../src/output.js";

export function captureOutput(): { output: Output; text: { out: string; err: string } } {
  const text = { out: "", err: "" };
  const output: Output = {
    out: (s) => {
      text.out += s;
    },
    err: (s) => {
      text.err += s;
    },
    interactive: false,
  };
  return { output, text };
}

/** A file of the repository by its path from the root. */
export const repoFile = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** A repository blueprint's `time.start` (Unix ms): where an offline run's calendar begins. */
export const calendarStart = (file: string): number => loadBlueprint(repoFile(file)).blueprint.time.start;

/** Every domain event of a repository blueprint's first `durationMs`. */
export function eventsOf(file: string, durationMs: number): DomainEvent[] {
  const simulation = new Simulation(loadBlueprint(repoFile(file)).blueprint);
  const events: DomainEvent[] = [];
  simulation.onEvent((e) => events.push(e));
  simulation.runUntil(durationMs);
  return events;
}
