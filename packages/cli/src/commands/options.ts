/** Option values shared by commands: durations and seeds, checked with messages a user can act on. */
import { openSync } from "node:fs";
import { parseDuration } from "@gpusynth/blueprint";
import { UsageError } from "../usage.js";

export function durationOption(name: string, text: string | boolean | undefined, fallback: string): number {
  const value = typeof text === "string" ? text : fallback;
  const ms = parseDuration(value);
  if (ms === undefined || ms <= 0) throw new UsageError(`--${name}: expected a positive duration such as 90m, 24h or 7d, found "${value}"`);
  return ms;
}

export function seedOption(text: string | boolean | undefined): number | undefined {
  if (typeof text !== "string") return undefined;
  const seed = Number(text);
  if (!/^\d+$/.test(text) || seed > 0xffff_ffff) throw new UsageError(`--seed: expected an integer from 0 to 4294967295, found "${text}"`);
  return seed;
}

export function oneBlueprint(positionals: readonly string[], fallback: string): string {
  if (positionals.length > 1) throw new UsageError(`expected at most one blueprint, found ${positionals.length}: ${positionals.join(" ")}`);
  return positionals[0] ?? fallback;
}

/** Opens an output file named by --<flag>, or says which flag and file could not be written. */
export function openForWriting(flag: string, file: string): number {
  try {
    return openSync(file, "w");
  } catch (cause) {
    throw new UsageError(`--${flag}: cannot write "${file}": ${(cause as NodeJS.ErrnoException).code ?? String(cause)}`);
  }
}
