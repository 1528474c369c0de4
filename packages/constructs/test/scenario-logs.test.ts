/**
 * Each shipped scenario's story as KAI's log tells it: the lines (by caller and message) the
 * story must contain, from a run of the scenario through the scheduler's log writer — the
 * reclaims and the priority preemption of preemption-storm, the quota refusals of
 * quota-exhaustion, the failing allocations and not-ready nodes of gpu-fault, the skips of jobs
 * no easier than one that already failed.
 */

import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterLogs } from "@gpusynth/constructs";
import { Simulation } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";

const HOUR = 3_600_000;

/** The scheduler's log lines of a scenario's first `hours`, without colour codes, caller⇥message. */
function schedulerLines(scenario: string, hours: number): string[] {
  const { blueprint } = loadBlueprint(fileURLToPath(new URL(`../../../blueprints/scenarios/${scenario}.yaml`, import.meta.url)));
  const simulation = new Simulation(blueprint);
  const logs = new ClusterLogs(blueprint, undefined, { events: false, scheduler: true });
  simulation.onEvent(logs.record);
  const lines: string[] = [];
  for (let t = HOUR / 4; t <= hours * HOUR; t += HOUR / 4) {
    simulation.runUntil(t);
    // Strip ESC[..m colour codes and the timestamp and level: caller⇥[session] [action] message.
    for (const r of logs.drain(simulation.view()))
      lines.push(
        r.body
          .replace(/.\[\d+m/g, "")
          .split("\t")
          .slice(2)
          .join("\t"),
      );
  }
  return lines;
}

const has = (lines: readonly string[], caller: string, message: RegExp) =>
  lines.some((l) => l.startsWith(`${caller}\t`) && message.test(l));

describe("the scheduler's log of each shipped scenario", () => {
  it.each([
    [
      "preemption-storm",
      3,
      [
        [
          "reclaim/reclaim.go:87",
          /Reclaimed resources for job <runai-owner\/pg-owner-\d-[\w-]+>, evicting reclaimee tasks: <\[<runai-borrower\/borrow-\w-0-0>\]>\.$/,
        ],
        [
          "preempt/preempt.go:85",
          /Successfully preempted for job <runai-borrower\/pg-serve-[\w-]+>, preempted tasks: <\[<runai-borrower\/[\w-]+>\]>$/,
        ],
        [
          "preempt/preempt.go:103",
          /Attempting to preempt for job: <[^>]+>, priority: <\d+>, queue: <[\w-]+>, resources: <CPU: [\d.]+ \(cores\), memory: [\d.]+ \(GB\), Gpus: \d+>$/,
        ],
        ["consolidation/consolidation.go:60", /Skipping consolidation for job: <[^>]+> - is not easier to consolidate for than: <[^>]+>$/],
        [
          "cache/cache.go:272",
          /Creating bind request for task <[^>]+> to node <[\w-]+> gpuGroup: <\[\]>, requires: <GPU: \d+, CPU: [\d.]+ \(cores\), memory: [\d.]+ \(GB\)> GPUs$/,
        ],
      ],
    ],
    [
      "quota-exhaustion",
      3,
      [
        ["allocate/allocate.go:88", /Could not allocate resources for job: <[^>]+> of queue <[\w-]+>$/],
        ["preempt/preempt.go:109", /Job <[^>]+> would have placed the queue resources over quota$/],
      ],
    ],
    [
      "gpu-fault",
      5,
      [
        ["proportion/proportion.go:262", /Node <train-node-0> is not ready, not counting resource for proportion calculations$/],
        [
          "proportion/proportion.go:248",
          /Total allocatable resources are <CPU: [\d.]+ \(cores\), memory: [\d.]+ \(GB\), Gpus: \d+>, number of nodes: <2>, number of queues: <\d+>$/,
        ],
        ["allocate/allocate.go:106", /Succesfully allocated resources for job: <runai-llm\/pg-pretrain-[\w-]+>$/],
      ],
    ],
  ] as const)("%s holds the lines its story calls for", (scenario, hours, expected) => {
    const lines = schedulerLines(scenario, hours);
    for (const [caller, message] of expected) expect(has(lines, caller, message), `${caller} ${message}`).toBe(true);
  });
});
