/**
 * The proportion plugin's per-queue "Resource division result" lines read next to the scheduler's
 * own metrics: every cycle of the log names every queue once, and the last cycle before a scrape
 * states the fair share and deserved quota that kai_queue_fair_share_gpu and
 * kai_queue_deserved_gpus report at that scrape (KAI sets both in reportDivisionResult).
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { allSamples } from "./family-index.js";

const MINUTE = 60_000;
// KAI ends the line with a space, which filelog trims off as it reads (kai-scheduler/logs.ts).
const DIVISION =
  /\[(\w+)\] Resource division result for queue <([\w-]+)>: Queue Priority: <100>, GPU: deserved: <([\d.]+)>, requested: <([\d.]+)>, maxAllowed: <(Unlimited|[\d.]+)>, allocated: <([\d.]+)>, historicalUsage: <0>, fairShare: <([\d.]+)> CPU \(cores\): deserved: <Unlimited>, requested: <([\d.]+)>, maxAllowed: <Unlimited>, allocated: <([\d.]+)>, historicalUsage: <0>, fairShare: <([\d.]+)> memory \(GB\): deserved: <Unlimited>, requested: <([\d.]+)>, maxAllowed: <Unlimited>, allocated: <([\d.]+)>, historicalUsage: <0>, fairShare: <([\d.]+)>$/;

describe("the scheduler log's resource division", () => {
  it.each(["preemption-storm", "quota-exhaustion"])("%s: one line per queue each cycle, agreeing with the queue metrics", (scenario) => {
    const { blueprint } = loadBlueprint(fileURLToPath(new URL(`../../../blueprints/scenarios/${scenario}.yaml`, import.meta.url)));
    const run = new ClusterRun(blueprint, { logs: { events: false, scheduler: true }, sources: ["kai-scheduler"] });
    let compared = 0;
    drive(run, every(15 * MINUTE, { toMs: 90 * MINUTE }), (frame) => {
      const metric = (name: string) =>
        new Map(
          allSamples(frame.targets)
            .filter((s) => s.family.name === name)
            .map((s) => [s.labels.queue_name, s.value] as const),
        );
      const fairShare = metric("kai_queue_fair_share_gpu");
      const deserved = metric("kai_queue_deserved_gpus");
      const bySession = new Map<string, RegExpExecArray[]>();
      for (const record of frame.logs) {
        const match = DIVISION.exec(record.body.replace(/.\[\d+m/g, ""));
        if (match === null) continue;
        const session = match[1] as string;
        const lines = bySession.get(session);
        if (lines === undefined) bySession.set(session, [match]);
        else lines.push(match);
      }
      const sessions = [...bySession.values()];
      expect(sessions.length).toBeGreaterThan(0);
      for (const lines of sessions) expect(lines.map((m) => m[2]).sort()).toEqual([...deserved.keys()].sort());
      for (const m of sessions.at(-1) ?? []) {
        const [queue, gpuDeserved, gpuRequested, , gpuAllocated, gpuFair, cpuRequested, cpuAllocated, cpuFair] = m.slice(2).map(String);
        expect(Number(gpuFair), `${queue} fair share`).toBe(fairShare.get(queue));
        expect(Number(gpuDeserved), `${queue} deserved`).toBe(deserved.get(queue));
        expect(Number(gpuRequested)).toBeGreaterThanOrEqual(Number(gpuAllocated));
        expect(Number(cpuRequested)).toBeGreaterThanOrEqual(Number(cpuAllocated));
        // No CPU quota: a queue's fair share of CPU is what it requests.
        expect(cpuFair).toBe(cpuRequested);
        compared++;
      }
    });
    expect(compared).toBeGreaterThan(0);
  });
});
