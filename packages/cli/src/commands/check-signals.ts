import { loadBlueprint } from "@gpusynth/blueprint";
import { fidelityProblems } from "../fidelity.js";
import { collectInventory } from "../inventory.js";
import type { Output } from "../output.js";
import { parseCommand } from "../parse.js";
import { SIGNALS_DIR, shippedBlueprints } from "../repo-paths.js";
import { readSignals } from "../signals-doc.js";
import { EXIT_FAILURE, EXIT_OK } from "../usage.js";
import { durationOption } from "./options.js";

export const checkSignalsHelp = `Usage: gpusynth check-signals [options] [blueprint ...]

Signal fidelity: runs blueprints offline, collects what they actually emit, and compares it with
signals/*.md. Fails (exit 1) when a run emits a family, label, type or HELP text that signals/
does not document, emits a family marked PENDING, or when a family documented as emitted is
emitted by none of the runs.

Arguments:
  blueprint            YAML files (default: every shipped blueprint, blueprints/ and blueprints/scenarios/)

Options:
  --duration <d>       simulated time per blueprint (default: 1d)
  --interval <d>       scrape interval (default: 10m; families appear whatever the interval)
  -h, --help           show this help

Example:
  gpusynth check-signals
`;

export function checkSignalsCommand(args: readonly string[], output: Output): number {
  const { values, positionals } = parseCommand(args, { duration: { type: "string" }, interval: { type: "string" } }, "check-signals");
  const durationMs = durationOption("duration", values.duration, "1d");
  const intervalMs = durationOption("interval", values.interval, "10m");
  const files = positionals.length > 0 ? positionals : shippedBlueprints();
  const inventories = files.map((file) => collectInventory(loadBlueprint(file).blueprint, durationMs, intervalMs));
  const documented = readSignals(SIGNALS_DIR);
  const problems = fidelityProblems(inventories, documented);
  const families = new Set(inventories.flatMap((i) => i.sources.flatMap((s) => s.families.map((f) => f.name))));
  const logFields = new Set(
    inventories.flatMap((i) => i.logs.flatMap((l) => [...l.resourceKeys, ...l.attributeKeys].map((k) => `${l.receiver}/${k}`))),
  ).size;
  if (problems.length > 0) {
    output.err(`signal fidelity: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}\n`);
    return EXIT_FAILURE;
  }
  output.out(
    `signal fidelity: ${families.size} emitted metric families and ${logFields} log fields match signals/ (${documented.length} documented, ${files.length} blueprint(s))\n`,
  );
  return EXIT_OK;
}
