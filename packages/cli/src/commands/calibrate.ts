import { formatDuration, formatProblem, loadBlueprint } from "@gpusynth/blueprint";
import { measure } from "../calibration/measure.js";
import { calibrationRows, calibrationTable, passed } from "../calibration/rows.js";
import { checkCost } from "../cost-limit.js";
import type { Output } from "../output.js";
import { parseCommand } from "../parse.js";
import { Progress } from "../progress.js";
import { DEFAULT_BLUEPRINT } from "../repo-paths.js";
import { EXIT_FAILURE, EXIT_OK, UsageError } from "../usage.js";
import { decimalOption, oneBlueprint, seedOption } from "./options.js";

export const calibrateHelp = `Usage: gpusynth calibrate [options] [blueprint]

Runs a blueprint offline and prints, next to the tolerance bands it declares under
calibration.targets, what its simulated cluster produced: GPU workloads per GPU-day and their
diurnal peak/mean; GPUs per workload and run times (median, p90); waiting time (median, mean,
and mean in saturated projects); final status shares; the share of preemptible workloads
preempted; the share of allocated-GPU samples at 0 % utilisation; hardware interruptions per
GPU-day; mean allocation. Measurement starts after calibration.warmup (default 1 day), once
long-lived workloads have filled the cluster. Exits 1 if any measured rate falls outside its band.

Arguments:
  blueprint       YAML file (default: blueprints/lab.yaml)

Options:
  --days <n>      simulated days to run (default: the blueprint's calibration.days, else 7)
  --seed <n>      override the blueprint's seed (0 … 4294967295)
  --json          print the rows as JSON
  --no-cost-limit run a blueprint beyond the cost limits (gpusynth validate prints the estimate)
  -h, --help      show this help

Examples:
  gpusynth calibrate                                  # the lab blueprint, its declared days
  gpusynth calibrate blueprints/enterprise.yaml --days 14
`;

export function calibrateCommand(args: readonly string[], output: Output): number {
  const { values, positionals } = parseCommand(
    args,
    { days: { type: "string" }, seed: { type: "string" }, json: { type: "boolean" }, "no-cost-limit": { type: "boolean" } },
    "calibrate",
  );
  const seed = seedOption(values.seed);
  const file = oneBlueprint(positionals, DEFAULT_BLUEPRINT);
  const { blueprint, warnings } = loadBlueprint(file);
  for (const warning of warnings) output.err(`${formatProblem(warning, file)}\n`);
  let days = blueprint.calibration.days;
  if (typeof values.days === "string") {
    days = decimalOption(values.days) ?? Number.NaN;
    if (!(days > 0 && days <= 365))
      throw new UsageError(`--days: expected a number of days from 0 to 365, such as 7 or 0.5, found "${values.days}"`);
  }
  const totalMs = blueprint.calibration.warmup + days * 86_400_000;
  checkCost(blueprint, file, totalMs, `the warm-up and ${days} day(s) measured`, seed, values["no-cost-limit"] === true);
  const progress = new Progress(output, `calibrate ${blueprint.cluster.name}`, totalMs);
  const measured = measure(blueprint, days * 86_400_000, blueprint.calibration.warmup, seed, (t) => progress.update(t));
  progress.finish();
  const rows = calibrationRows(blueprint, measured);
  const ok = passed(rows);
  if (values.json === true)
    output.out(`${JSON.stringify({ blueprint: file, days, seed: seed ?? blueprint.seed, passed: ok, rows }, null, 2)}\n`);
  else {
    output.out(
      `${file}: ${days} simulated day(s) after a ${formatDuration(blueprint.calibration.warmup)} warm-up, seed ${seed ?? blueprint.seed}\n\n${calibrationTable(rows)}\n\n`,
    );
    const failed = rows.filter((r) => r.verdict === "fail" || r.verdict === "not measured");
    output.out(
      ok
        ? "calibration: every measured rate is within its band\n"
        : `calibration: ${failed.length} rate(s) outside their band: ${failed.map((r) => r.metric).join(", ")}\n`,
    );
  }
  return ok ? EXIT_OK : EXIT_FAILURE;
}
