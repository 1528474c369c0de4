import { readFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import type { Blueprint } from "@gpusynth/blueprint";
import type { Inventory } from "../inventory.js";
import { blueprintFiles, collectInventories } from "../inventory-pool.js";
import type { Output } from "../output.js";
import { parseCommand } from "../parse.js";
import { Progress } from "../progress.js";
import { SIGNALS_DIR, shippedBlueprints } from "../repo-paths.js";
import { fidelityProblems } from "../signal-fidelity.js";
import { readSignals } from "../signals-doc.js";
import { EXIT_FAILURE, EXIT_OK } from "../usage.js";
import { beyondOneShard, readVolumeMarkdown, volumeDrift, volumeOf, volumeRun } from "../volume.js";
import { durationOption } from "./options.js";

/** Simulated time a shipped scenario runs by default: its story and a margin. */
const SCENARIO_RUN_MS = 6 * 3_600_000;

export const checkSignalsHelp = `Usage: gpusynth check-signals [options] [blueprint ...]

Signal fidelity: runs blueprints offline, collects what they actually emit, and compares it with
signals/*.md. Fails (exit 1) when a run emits a family, label, type or HELP text that signals/
does not document, emits a family marked PENDING, or, checking the shipped blueprints, when a
family documented as emitted is emitted by none of them. With the default duration and interval
it also measures each blueprint that signals/volume.md documents and fails when a figure there is
off by more than 10 %. Blueprints run in parallel, one per core.

Arguments:
  blueprint            YAML files (default: every shipped blueprint, blueprints/ and blueprints/scenarios/,
                       but those beyond one shard, such as hyperscale.yaml: name them to check them)

Options:
  --duration <d>       simulated time per blueprint (default: 1d, and 6h for the scenarios of
                       blueprints/scenarios, whose stories end within 4 hours)
  --interval <d>       simulated time between collections (default: 10m; 2h beyond one shard)
  -h, --help           show this help

Example:
  gpusynth check-signals
`;

export async function checkSignalsCommand(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseCommand(args, { duration: { type: "string" }, interval: { type: "string" } }, "check-signals");
  const durationMs = durationOption("duration", values.duration, "1d");
  // A scenario's story ends within hours: a day of it adds only idle scheduler cycles.
  const durationOf = (file: string) =>
    values.duration === undefined && basename(dirname(file)) === "scenarios" ? Math.min(durationMs, SCENARIO_RUN_MS) : durationMs;
  const intervalMs = durationOption("interval", values.interval, "10m");
  // Defaults: each blueprint's volume run, so signals/volume.md is checked too.
  const intervalOf = (_file: string, blueprint: Blueprint) =>
    values.interval === undefined && values.duration === undefined ? volumeRun(blueprint).intervalMs : intervalMs;
  // A blueprint beyond one shard takes a minute and gigabytes: checked when named.
  const named = blueprintFiles(positionals.length > 0 ? positionals : shippedBlueprints());
  const files = positionals.length > 0 ? named : named.filter(({ blueprint }) => !beyondOneShard(blueprint));
  const left = named.filter((run) => !files.includes(run));
  for (const { file } of left)
    output.err(
      `check-signals: leaving out ${relative(process.cwd(), file)} (beyond one shard: about a minute and 3 GB; name it to check it)\n`,
    );
  const progress = new Progress(output, "check-signals", files.length, { noun: "blueprints" });
  // Blueprints finish minutes apart: a timer keeps the line (and a CI log) moving in between.
  let last = { done: 0, running: [] as readonly string[] };
  const tick = setInterval(() => progress.update(last.done, runningText(last.running)), 1_000);
  let inventories: Inventory[];
  try {
    inventories = await collectInventories(files, durationOf, intervalOf, (done, running) => {
      last = { done, running };
      progress.update(done, runningText(running));
    });
  } finally {
    clearInterval(tick);
    progress.finish();
  }
  const documented = readSignals(SIGNALS_DIR);
  // Named blueprints need not tell every story: only the shipped set must emit every documented family.
  const problems = fidelityProblems(inventories, documented, positionals.length === 0);
  const volumeChecked = values.duration === undefined && values.interval === undefined;
  const volumes = volumeChecked ? volumeProblems(inventories) : { problems: [], blueprints: 0 };
  problems.push(...volumes.problems);
  const families = new Set(inventories.flatMap((i) => i.sources.flatMap((s) => s.families.map((f) => f.name))));
  const logFields = new Set(
    inventories.flatMap((i) => i.logs.flatMap((l) => [...l.resourceKeys, ...l.attributeKeys].map((k) => `${l.receiver}/${k}`))),
  ).size;
  if (problems.length > 0) {
    output.err(`signal fidelity: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}\n`);
    return EXIT_FAILURE;
  }
  const volumeText = volumes.blueprints > 0 ? `; signals/volume.md holds within 10 % for ${volumes.blueprints} blueprint(s)` : "";
  output.out(
    `signal fidelity: ${families.size} emitted metric families and ${logFields} log fields match signals/ (${documented.length} documented, ${files.length} blueprint(s))${volumeText}\n`,
  );
  return EXIT_OK;
}

function runningText(running: readonly string[]): string | undefined {
  return running.length === 0 ? undefined : `running ${running.join(", ")}`;
}

/** signals/volume.md against the inventories of the blueprints it documents. */
function volumeProblems(inventories: readonly Inventory[]): { problems: string[]; blueprints: number } {
  const documented = readVolumeMarkdown(readFileSync(join(SIGNALS_DIR, "volume.md"), "utf8"));
  const problems: string[] = [];
  let blueprints = 0;
  for (const inventory of inventories) {
    const rows = documented.get(inventory.blueprint);
    if (rows === undefined) continue;
    blueprints++;
    for (const off of volumeDrift(rows, volumeOf(inventory))) problems.push(`signals/volume.md: ${inventory.blueprint}: ${off}`);
  }
  return { problems, blueprints };
}
