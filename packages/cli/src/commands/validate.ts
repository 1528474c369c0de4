import { formatProblem, loadBlueprint } from "@gpusynth/blueprint";
import { estimateCost } from "@gpusynth/sim";
import { describeCost } from "../cost-limit.js";
import type { Output } from "../output.js";
import { parseCommand } from "../parse.js";
import { DEFAULT_BLUEPRINT } from "../repo-paths.js";
import { EXIT_OK } from "../usage.js";

export const validateHelp = `Usage: gpusynth validate [blueprint]

Checks a blueprint and reports every problem at once: the file, line and YAML path, what was
expected and what was found. Exits 0 when the blueprint is valid (warnings are printed but do
not fail), 2 when it is not. A valid blueprint's summary ends with what a simulated day of it
costs, estimated from a short trial: arrivals, the backlog's growth and the CPU time — what
\`gpusynth run\` checks against its cost limits (--no-cost-limit).

Arguments:
  blueprint   YAML file (default: blueprints/lab.yaml)

Options:
  -h, --help  show this help

Example:
  gpusynth validate blueprints/lab.yaml
`;

const DAY_MS = 86_400_000;

export function validateCommand(args: readonly string[], output: Output): number {
  const { positionals } = parseCommand(args, {}, "validate");
  const file = positionals[0] ?? DEFAULT_BLUEPRINT;
  const { blueprint, warnings } = loadBlueprint(file);
  for (const warning of warnings) output.err(`${formatProblem(warning, file)}\n`);
  const gpus = blueprint.nodePools.reduce((sum, pool) => sum + pool.nodes * pool.gpusPerNode, 0);
  output.out(
    `${file}: valid blueprint "${blueprint.cluster.name}": ${blueprint.nodePools.length} node pool(s), ${gpus} GPUs, ` +
      `${blueprint.departments.length} department(s), ${blueprint.projects.length} project(s), ${blueprint.workloads.length} workload generator(s), ${blueprint.submissions.length} scripted submission(s)\n`,
  );
  output.out(`${file}: estimated: ${describeCost(estimateCost(blueprint, DAY_MS), DAY_MS)}\n`);
  return EXIT_OK;
}
