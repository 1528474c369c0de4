/**
 * Each shipped scenario's story as KAI's log tells it: the lines (by caller and message) the
 * story must contain, from a run of the scenario through the scheduler's log writer — the
 * reclaims and the priority preemption of preemption-storm, the quota refusals of
 * quota-exhaustion, the failing allocations and not-ready nodes of gpu-fault, the skips of jobs
 * no easier than one that already failed.
 */

import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";

const HOUR = 3_600_000;

/** A line the story calls for: its caller, and its "[session] [action] message" without ESC[..m colour codes. */
type Expected = readonly [caller: string, message: RegExp];

/**
 * Which of `expected` the scheduler's log of a scenario's first `hours` holds, each line read as
 * it is written and none kept (a scenario's hours are hundreds of thousands of lines).
 */
function linesFound(scenario: string, hours: number, expected: readonly Expected[]): Set<Expected> {
  const { blueprint } = loadBlueprint(fileURLToPath(new URL(`../../../blueprints/scenarios/${scenario}.yaml`, import.meta.url)));
  const run = new ClusterRun(blueprint, { metrics: false, readsGpus: false, logs: { events: false, scheduler: true } });
  const found = new Set<Expected>();
  drive(run, every(HOUR / 4, { toMs: hours * HOUR }), (frame) => {
    if (found.size === expected.length) return;
    // timestamp⇥level⇥caller⇥[session] [action] message
    for (const { body } of frame.logs) {
      const level = body.indexOf("\t");
      const caller = body.indexOf("\t", level + 1);
      const message = body.indexOf("\t", caller + 1);
      const callerText = body.slice(caller + 1, message);
      for (const line of expected) {
        if (found.has(line) || callerText !== line[0]) continue;
        if (line[1].test(body.slice(message + 1).replace(/.\[\d+m/g, ""))) found.add(line);
      }
    }
  });
  return found;
}

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
    const found = linesFound(scenario, hours, expected);
    for (const line of expected) expect(found.has(line), `${line[0]} ${line[1]}`).toBe(true);
  });
});
