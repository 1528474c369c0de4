/**
 * gpusynth's command line: parses the command, runs it, and turns every mistake a user can
 * make (bad flags, bad blueprints) into a message and exit code 2 rather than a stack trace; an
 * output that fails during a run (a full disk) is a message and exit code 1.
 */
import { readFileSync } from "node:fs";
import { BlueprintError } from "@gpusynth/blueprint";
import { type Output, processOutput } from "./output.js";
import { OutputError } from "./output-file.js";
import { didYouMean } from "./suggest.js";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from "./usage.js";

/** A command's help and entry point, in the module that implements it. */
interface Loaded {
  readonly help: string;
  readonly run: (args: readonly string[], output: Output) => number | Promise<number>;
}

interface Command {
  readonly summary: string;
  /**
   * Imports the command's module only when it is used: `--help`, `--version` and a mistyped
   * command then start without loading the OpenTelemetry SDK and the simulation.
   */
  readonly load: () => Promise<Loaded>;
}

/** A command module's help text and entry point, by their export names. */
function pick<H extends string, R extends string>(module: Record<H, string> & Record<R, Loaded["run"]>, help: H, run: R): Loaded {
  return { help: module[help], run: module[run] };
}

const COMMANDS: Readonly<Record<string, Command>> = {
  run: {
    summary: "run a blueprint's simulated cluster: live and scrapeable (default), or --offline",
    load: async () => pick(await import("./commands/run.js"), "runHelp", "runCommand"),
  },
  validate: {
    summary: "check a blueprint and report every problem at once",
    load: async () => pick(await import("./commands/validate.js"), "validateHelp", "validateCommand"),
  },
  dump: {
    summary: "run offline and list every metric family emitted, with labels and series",
    load: async () => pick(await import("./commands/dump.js"), "dumpHelp", "dumpCommand"),
  },
  report: {
    summary: "run offline and draw allocation, utilisation, faults and waits as an HTML page",
    load: async () => pick(await import("./commands/report.js"), "reportHelp", "reportCommand"),
  },
  calibrate: {
    summary: "run offline and compare the cluster's rates with the blueprint's real-world targets",
    load: async () => pick(await import("./commands/calibrate.js"), "calibrateHelp", "calibrateCommand"),
  },
  leakcheck: {
    summary: "find sensitive blueprint names in clear in Prometheus series or OTLP-JSON",
    load: async () => pick(await import("./commands/leakcheck.js"), "leakcheckHelp", "leakcheckCommand"),
  },
  fidelity: {
    summary: "the Prometheus name of every family on each OTLP → Prometheus path",
    load: async () => pick(await import("./commands/fidelity.js"), "fidelityHelp", "fidelityCommand"),
  },
  "check-signals": {
    summary: "compare what runs emit with signals/ (signal fidelity)",
    load: async () => pick(await import("./commands/check-signals.js"), "checkSignalsHelp", "checkSignalsCommand"),
  },
};

export const mainHelp = `gpusynth — emulated telemetry of a Kubernetes GPU cluster scheduled by Run:ai

Usage: gpusynth <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(15)}${command.summary}`)
  .join("\n")}

Run "gpusynth <command> --help" (or "gpusynth help <command>") for a command's options;
"gpusynth --version" prints the version.

Examples:
  gpusynth validate blueprints/lab.yaml
  gpusynth run --offline --duration 24h --summary
  gpusynth report blueprints/scenarios/gpu-fault.yaml --duration 5h --out report.html
`;

/** The version of the gpusynth package, from its package.json. */
function version(): string {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: unknown };
  return typeof manifest.version === "string" ? manifest.version : "unknown";
}

function unknownCommand(name: string, output: Output): number {
  output.err(
    `gpusynth: unknown command "${name}"${didYouMean(name, Object.keys(COMMANDS))}\nRun "gpusynth --help" for the list of commands.\n`,
  );
  return EXIT_USAGE;
}

export async function main(argv: readonly string[], output: Output = processOutput): Promise<number> {
  const [name, ...args] = argv;
  if (name === "--version" || name === "-V") {
    output.out(`gpusynth ${version()}\n`);
    return EXIT_OK;
  }
  if (name === "help" && args[0] !== undefined) {
    const command = COMMANDS[args[0]];
    if (command === undefined) return unknownCommand(args[0], output);
    output.out((await command.load()).help);
    return EXIT_OK;
  }
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    output.out(mainHelp);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const listed = COMMANDS[name];
  if (listed === undefined) return unknownCommand(name, output);
  const command = await listed.load();
  if (args.includes("--help") || args.includes("-h")) {
    output.out(command.help);
    return EXIT_OK;
  }
  try {
    return await command.run(args, output);
  } catch (error) {
    if (error instanceof BlueprintError || error instanceof UsageError) {
      output.err(`gpusynth ${name}: ${error.message}\n`);
      return EXIT_USAGE;
    }
    if (error instanceof OutputError) {
      // A reader that stopped early (`… | head`) is not an error; any other failed write is.
      if (error.quiet) return EXIT_OK;
      output.err(`gpusynth ${name}: ${error.message}\n`);
      return EXIT_FAILURE;
    }
    output.err(
      `gpusynth ${name}: internal error (please report it with the blueprint that caused it)\n${(error as Error).stack ?? String(error)}\n`,
    );
    return EXIT_FAILURE;
  }
}
