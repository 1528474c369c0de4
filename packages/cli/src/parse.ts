import { parseArgs } from "node:util";
import { didYouMean } from "./suggest.js";
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
    throw new UsageError(`${parseProblem(cause as NodeJS.ErrnoException, options)}\nRun "gpusynth ${command} --help" for usage.`);
  }
}

/** Node's parseArgs errors, said in gpusynth's words: the flag, what was expected, what was found. */
function parseProblem(error: NodeJS.ErrnoException, options: Readonly<Record<string, OptionSpec>>): string {
  const flag = /'(-[^' ]+)/.exec(error.message)?.[1] ?? "";
  const names = [...Object.keys(options).map((name) => `--${name}`), "--help"];
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option "${flag}"${didYouMean(flag, names)}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (/does not take an argument/.test(error.message)) return `${flag} takes no value`;
      if (/ambiguous/.test(error.message))
        return `${flag}: expected a value; one that starts with "-" is written ${flag}=<value>, e.g. ${flag}=-1`;
      return `${flag}: expected a value after it`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument: ${error.message}`;
    default:
      return error.message;
  }
}

/** The occurrences of a repeatable (multiple) option. */
export function repeated(values: ParsedCommand["values"], name: string): string[] {
  return (values[name] as unknown as string[] | undefined) ?? [];
}
