import { formatDuration, formatProblem, loadBlueprint } from "@gpusynth/blueprint";
import { Simulation, SummaryCollector } from "@gpusynth/sim";
import type { Output } from "../output.js";
import { parseCommand } from "../parse.js";
import { DEFAULT_BLUEPRINT } from "../repo-paths.js";
import { summaryJson, summaryText } from "../summary-table.js";
import { EXIT_OK, UsageError } from "../usage.js";
import { durationOption, oneBlueprint, seedOption } from "./options.js";

export const runHelp = `Usage: gpusynth run --offline [options] [blueprint]

Runs the simulated cluster described by a blueprint. With --offline it runs as fast as the CPU
allows (simulated time, not wall-clock time) and, with --summary, prints per-project and
per-node-pool totals: GPU allocation, waiting times, completions, failures, cancellations and
preemptions. Live, wall-clock-paced emission of metrics and logs is not built yet; until it is,
run needs --offline.

Arguments:
  blueprint            YAML file (default: blueprints/lab.yaml)

Options:
  --offline            run in simulated time, as fast as possible
  --duration <d>       simulated time to run, e.g. 90m, 24h, 7d (default: 24h)
  --seed <n>           override the blueprint's seed (0 … 4294967295)
  --summary            print the summary table at the end
  --json               print the summary as JSON instead of a table (implies --summary)
  -h, --help           show this help

Examples:
  gpusynth run --offline --duration 24h --summary
  gpusynth run --offline --duration 7d --seed 7 --json blueprints/lab.yaml
`;

const HOUR_MS = 3_600_000;

export function runCommand(args: readonly string[], output: Output): number {
  const { values, positionals } = parseCommand(
    args,
    {
      offline: { type: "boolean" },
      duration: { type: "string" },
      seed: { type: "string" },
      summary: { type: "boolean" },
      json: { type: "boolean" },
    },
    "run",
  );
  if (values.offline !== true) {
    throw new UsageError(
      'live runs (metrics and logs paced to the wall clock) are not built yet: add --offline.\nRun "gpusynth run --help" for usage.',
    );
  }
  const durationMs = durationOption("duration", values.duration, "24h");
  const seed = seedOption(values.seed);
  const file = oneBlueprint(positionals, DEFAULT_BLUEPRINT);
  const { blueprint, warnings } = loadBlueprint(file);
  for (const warning of warnings) output.err(`${formatProblem(warning, file)}\n`);
  const simulation = new Simulation(blueprint, seed === undefined ? {} : { seed });
  const collector = new SummaryCollector(
    blueprint.projects.map((p) => ({ name: p.name, gpus: Object.values(p.nodePools).reduce((sum, q) => sum + q.deserved, 0) })),
    blueprint.nodePools.map((p) => ({ name: p.name, gpus: p.nodes * p.gpusPerNode })),
  );
  simulation.onEvent(collector.record);

  // Advance an hour at a time so a long run can show where it is.
  let lastDrawn = 0;
  for (let t = 0; t < durationMs; ) {
    t = Math.min(durationMs, t + HOUR_MS);
    simulation.runUntil(t);
    if (output.interactive && performance.now() - lastDrawn > 200) {
      lastDrawn = performance.now();
      output.err(`\rsimulated ${formatDuration(t)} of ${formatDuration(durationMs)} (${Math.floor((100 * t) / durationMs)}%)   `);
    }
  }
  if (output.interactive) output.err("\r\u001b[K");

  if (values.summary === true || values.json === true) {
    const view = simulation.view();
    const byProject = new Map<string, number>();
    const byPool = new Map<string, number>();
    for (const w of view.pending) {
      byProject.set(w.project, (byProject.get(w.project) ?? 0) + 1);
      const pool = w.nodePools[0] as string;
      byPool.set(pool, (byPool.get(pool) ?? 0) + 1);
    }
    const summary = collector.summary(simulation.now);
    output.out(
      values.json === true
        ? `${JSON.stringify(summaryJson(summary, { byProject, byPool }), null, 2)}\n`
        : summaryText(summary, { byProject, byPool }),
    );
  } else {
    output.out(`simulated ${formatDuration(durationMs)} of "${blueprint.cluster.name}"; add --summary for the totals\n`);
  }
  return EXIT_OK;
}
