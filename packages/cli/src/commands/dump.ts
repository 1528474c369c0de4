import { formatDuration, loadBlueprint } from "@gpusynth/blueprint";
import { checkCost } from "../cost-limit.js";
import { collectInventory, inventoryMarkdown } from "../inventory.js";
import type { Output } from "../output.js";
import { parseCommand } from "../parse.js";
import { Progress } from "../progress.js";
import { DEFAULT_BLUEPRINT } from "../repo-paths.js";
import { EXIT_OK, UsageError } from "../usage.js";
import { durationOption, oneBlueprint, seedOption } from "./options.js";

export const dumpHelp = `Usage: gpusynth dump [options] [blueprint]

Runs a blueprint offline for a bounded time, samples every emulated scrape target at each
interval, and prints what was emitted: per source (dcgm, kubelet, kubernetes, node-exporter,
runai, scheduler; node-exporter where telemetry.nodeExporter is on) its scrape jobs, and per
metric family its type, the label keys seen and the most series at once.

Arguments:
  blueprint            YAML file (default: blueprints/lab.yaml)

Options:
  --duration <d>       simulated time to run (default: 6h)
  --interval <d>       scrape interval (default: 15s)
  --seed <n>           override the blueprint's seed
  --format <f>         markdown (default) or json
  --no-cost-limit      run a blueprint beyond the cost limits (gpusynth validate prints the estimate)
  -h, --help           show this help

Examples:
  gpusynth dump
  gpusynth dump --duration 1d --interval 1m --format json blueprints/enterprise.yaml
`;

export function dumpCommand(args: readonly string[], output: Output): number {
  const { values, positionals } = parseCommand(
    args,
    {
      duration: { type: "string" },
      interval: { type: "string" },
      seed: { type: "string" },
      format: { type: "string" },
      "no-cost-limit": { type: "boolean" },
    },
    "dump",
  );
  const durationMs = durationOption("duration", values.duration, "6h");
  const intervalMs = durationOption("interval", values.interval, "15s");
  const seed = seedOption(values.seed);
  const format = typeof values.format === "string" ? values.format : "markdown";
  if (format !== "markdown" && format !== "json") throw new UsageError(`--format: expected markdown or json, found "${format}"`);
  const file = oneBlueprint(positionals, DEFAULT_BLUEPRINT);
  const { blueprint } = loadBlueprint(file);
  checkCost(blueprint, file, durationMs, `${formatDuration(durationMs)} simulated`, seed, values["no-cost-limit"] === true);
  const progress = new Progress(output, `dump ${blueprint.cluster.name}`, durationMs);
  const inventory = collectInventory(blueprint, durationMs, intervalMs, seed, (t) => progress.update(t));
  progress.finish();
  output.out(format === "json" ? `${JSON.stringify(inventory, null, 2)}\n` : inventoryMarkdown(inventory));
  return EXIT_OK;
}
