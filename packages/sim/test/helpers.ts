import { fileURLToPath } from "node:url";
import { type Blueprint, loadBlueprint } from "@gpusynth/blueprint";
import { type DomainEvent, Simulation, type SimulationOptions } from "@gpusynth/sim";

export const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
export const repoFile = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

export interface Run {
  readonly blueprint: Blueprint;
  readonly simulation: Simulation;
  readonly events: DomainEvent[];
}

/** Loads a blueprint file and runs it offline for `durationMs`, collecting every event. */
export function run(file: string, durationMs: number, seed?: number, options: Omit<SimulationOptions, "seed"> = {}): Run {
  return runCollecting(file, durationMs, seed, options, () => true);
}

/**
 * `run`, collecting only the events of `kinds`: a long run's scheduling cycles are most of its
 * events (each lists every pending job's attempt), and keeping a day of them costs a test more
 * garbage collection than the run itself.
 */
export function runKeeping<K extends DomainEvent["kind"]>(
  kinds: readonly K[],
  file: string,
  durationMs: number,
  seed?: number,
): Omit<Run, "events"> & { readonly events: (DomainEvent & { kind: K })[] } {
  const kept = new Set<string>(kinds);
  const { events, ...rest } = runCollecting(file, durationMs, seed, {}, (event) => kept.has(event.kind));
  return { ...rest, events: events as (DomainEvent & { kind: K })[] };
}

function runCollecting(
  file: string,
  durationMs: number,
  seed: number | undefined,
  options: Omit<SimulationOptions, "seed">,
  keep: (event: DomainEvent) => boolean,
): Run {
  const { blueprint } = loadBlueprint(file);
  const simulation = new Simulation(blueprint, { ...options, ...(seed === undefined ? {} : { seed }) });
  const events: DomainEvent[] = [];
  simulation.onEvent((event) => {
    if (keep(event)) events.push(event);
  });
  simulation.runUntil(durationMs);
  return { blueprint, simulation, events };
}

/** The events about one workload, by the workload's name. */
export function eventsOf(events: readonly DomainEvent[], name: string): DomainEvent[] {
  return events.filter((e) => "workload" in e && e.workload.name === name);
}

export function only<K extends DomainEvent["kind"]>(events: readonly DomainEvent[], kind: K): (DomainEvent & { kind: K })[] {
  return events.filter((e): e is DomainEvent & { kind: K } => e.kind === kind);
}
