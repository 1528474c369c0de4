import { formatDuration, formatProblem, loadBlueprint } from "@gpusynth/blueprint";
import { checkCost } from "../cost-limit.js";
import type { Output } from "../output.js";
import { OutputFile } from "../output-file.js";
import { parseCommand } from "../parse.js";
import { Progress } from "../progress.js";
import { DEFAULT_BLUEPRINT } from "../repo-paths.js";
import { recordTimeline } from "../report/timeline.js";
import { EXIT_OK, UsageError } from "../usage.js";
import { durationOption, oneBlueprint, seedOption } from "./options.js";

export const reportHelp = `Usage: gpusynth report [options] [blueprint] --out <file.html>

Runs a blueprint offline and writes one self-contained HTML page (charts drawn as static SVG
by Apache ECharts' server-side renderer; no script, nothing fetched) for people who would rather
look than read: GPUs allocated per node pool and per project against quota, GPU utilisation as a
heatmap (a row per GPU), the workloads on each GPU over time, node health with XIDs and reboots
written on the chart, failures and evictions on one timeline, the waiting pods by the scheduler's
reason, the wait-time distribution, and totals per project. docs/report/ shows one per scenario.

Arguments:
  blueprint         YAML file (default: blueprints/lab.yaml)

Options:
  --out <file>      where to write the page (required)
  --duration <d>    simulated time to run, e.g. 6h, 7d (default: 24h)
  --seed <n>        override the blueprint's seed (0 … 4294967295)
  --no-cost-limit   run a blueprint beyond the cost limits (gpusynth validate prints the estimate)
  -h, --help        show this help

Examples:
  gpusynth report blueprints/scenarios/preemption-storm.yaml --duration 3h --out storm.html
  gpusynth report --duration 7d --out lab-week.html
`;

export async function reportCommand(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseCommand(
    args,
    { out: { type: "string" }, duration: { type: "string" }, seed: { type: "string" }, "no-cost-limit": { type: "boolean" } },
    "report",
  );
  if (typeof values.out !== "string") throw new UsageError('--out: expected the HTML file to write, e.g. "--out report.html"');
  const durationMs = durationOption("duration", values.duration, "24h");
  const seed = seedOption(values.seed);
  const file = oneBlueprint(positionals, DEFAULT_BLUEPRINT);
  const { blueprint, warnings } = loadBlueprint(file);
  for (const warning of warnings) output.err(`${formatProblem(warning, file)}\n`);
  checkCost(blueprint, file, durationMs, `${formatDuration(durationMs)} simulated`, seed, values["no-cost-limit"] === true);
  // Opened first (a bad path fails before the run), written to a temporary file and renamed into
  // place: a failed write leaves no partial page.
  const out = OutputFile.open("out", values.out);
  let timeline: ReturnType<typeof recordTimeline>;
  // The charting library is loaded only here: every other command starts without it.
  const { reportPage } = await import("../report/page.js");
  try {
    const progress = new Progress(output, `report ${blueprint.cluster.name}`, durationMs);
    timeline = recordTimeline(blueprint, durationMs, seed, (t) => progress.update(t));
    progress.finish();
    out.writeLine(reportPage(timeline));
    out.commit();
  } finally {
    out.discard();
  }
  output.out(
    `${values.out}: ${timeline.times.length} samples of ${timeline.allocation.length} node pool(s) and ${timeline.backlog.length} project(s), ${timeline.moments.length} failures, evictions, faults and reboots\n`,
  );
  return EXIT_OK;
}
