import { parseArgs } from "node:util";
import { UsageError } from "./usage.js";

interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  /** Repeatable: the value is the list of every occurrence. */
  readonly multiple?: boolean;
}

export interface ParsedCommand {
  /** Repeatable options hold a string[] (read them through `repeated`). */
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/** Parses a command's arguments strictly; unknown flags become a UsageError naming the command. */
export function parseCommand(args: readonly string[], options: Readonly<Record<string, OptionSpec>>, command: string): ParsedCommand {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as ParsedCommand["values"], positionals };
  } catch (cause) {
    throw new UsageError(`${(cause as Error).message}\nRun "gpusynth ${command} --help" for usage.`);
  }
}

/** The occurrences of a repeatable (multiple) option. */
export function repeated(values: ParsedCommand["values"], name: string): string[] {
  return (values[name] as unknown as string[] | undefined) ?? [];
}
