/**
 * KAI warns, in every snapshot, of each node whose GPU capacity and allocatable differ
 * (node_info.go:127 at v0.13.0, V(2), WARN): in gpu-fault, the nodes whose device plugin dropped a
 * GPU are the ones kube-state-metrics shows with fewer allocatable than capacity GPUs, cycle after
 * cycle; a scenario whose GPUs all stay advertised writes no WARN line. A node back from a reboot
 * lists no GPU until its device plugin registers again.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame } from "@gpusynth/constructs";
import { type DomainEvent, simulatedMs } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";

const scenario = (name: string) =>
  loadBlueprint(fileURLToPath(new URL(`../../../blueprints/scenarios/${name}.yaml`, import.meta.url))).blueprint;
const MINUTE = 60_000;
/** ESC: zap colours the level (yellow WARN). */
const ESC = String.fromCharCode(27);
const WARN = new RegExp(
  `^\\S+\\t${ESC}\\[33mWARN${ESC}\\[0m\\tnode_info/node_info\\.go:127\\t\\[\\S+\\] For node (\\S+), the capacity and allocatable are different\\. ` +
    "Capacity CPU: (\\d+) \\(cores\\), memory: ([\\d.]+) \\(GB\\), Gpus: (\\d+), pods: 110, " +
    "Allocatable CPU: \\2 \\(cores\\), memory: ([\\d.]+) \\(GB\\), Gpus: (\\d+), pods: 110$",
);

/** Per frame: the nodes KAI's last cycle warned of, with their GPUs, and those kube-state-metrics shows short. */
function warningsAndStatus(name: string, hours: number) {
  const run = new ClusterRun(scenario(name), { logs: { events: false, scheduler: true }, sources: ["kube-state-metrics"] });
  const seen: { t: number; warned: string[]; short: string[]; warnLines: number }[] = [];
  /** WARN lines of another shape, or naming a node that is not short. */
  const malformed: string[] = [];
  drive(run, every(MINUTE, { toMs: hours * 60 * MINUTE }), (frame: Frame) => {
    // The frame's last complete cycle: the lines after its last "Session" line.
    let warned: string[] = [];
    let warnLines = 0;
    for (const r of frame.logs) {
      if (r.body.includes("framework/session.go:353")) warned = [];
      if (!r.body.includes("WARN")) continue;
      warnLines++;
      const match = WARN.exec(r.body);
      const [, node, , , capacity, , allocatable] = match ?? [];
      if (match === null || !(Number(allocatable) < Number(capacity))) malformed.push(r.body);
      else warned.push(`${node} ${allocatable}/${capacity}`);
    }
    const samples = frame.targets.flatMap((t) => (t.target.job === "kube-state-metrics" && t.target.port === 8080 ? t.samples : []));
    const gpus = (family: string, node: string) =>
      samples.find((s) => s.family.name === family && s.labels.node === node && s.labels.resource === "nvidia_com_gpu")?.value;
    const nodes = [...new Set(samples.filter((s) => s.family.name === "kube_node_info").map((s) => s.labels.node as string))];
    const short = nodes
      .filter((node) => gpus("kube_node_status_allocatable", node) !== gpus("kube_node_status_capacity", node))
      .map((node) => `${node} ${gpus("kube_node_status_allocatable", node)}/${gpus("kube_node_status_capacity", node)}`);
    seen.push({ t: frame.simulatedMs, warned: warned.sort(), short: short.sort(), warnLines });
  });
  expect(malformed.slice(0, 3)).toEqual([]);
  return seen;
}

describe("KAI's warning of nodes whose GPU capacity and allocatable differ", () => {
  it("names, in every cycle, exactly the nodes kube-state-metrics shows short of GPUs (gpu-fault)", () => {
    const frames = warningsAndStatus("gpu-fault", 5);
    // The log holds the cycles that ended by the frame; a minute in which a GPU changed is left out.
    const stable = frames.filter((f, i) => i > 0 && JSON.stringify(frames[i - 1]?.short) === JSON.stringify(f.short));
    expect(stable.length).toBeGreaterThan(frames.length - 10);
    for (const f of stable) expect(f.warned, `at ${f.t / MINUTE} min`).toEqual(f.short);
    // Before the first fault none; after the XIDs the device plugin acts on, some.
    expect(frames.filter((f) => f.short.length === 0).length).toBeGreaterThan(0);
    expect(frames.filter((f) => f.short.length > 0).length).toBeGreaterThan(0);
    // A cycle a second: a minute holds about 60 warnings per short node.
    const steady = frames.find((f) => f.short.length === 1 && frames.some((g) => g.t === f.t - MINUTE && g.short.length === 1));
    expect(steady?.warnLines).toBeGreaterThanOrEqual(58);
  });

  it("writes no WARN line where every GPU stays advertised (preemption-storm)", () => {
    const frames = warningsAndStatus("preemption-storm", 2);
    expect(frames.every((f) => f.warnLines === 0 && f.short.length === 0)).toBe(true);
  });
});

describe("a node back from a reboot (gpu-fault's XID 79)", () => {
  it("lists no GPU until its device plugin registers, 5 to 20 s after NodeReady, and binds nothing there before", () => {
    const blueprint = scenario("gpu-fault");
    const events: DomainEvent[] = [];
    const run = new ClusterRun(blueprint, { observers: [(e) => events.push(e)] });
    run.advanceTo(simulatedMs(5 * 60 * MINUTE));
    const ready = events.find((e) => e.kind === "NodeReady");
    expect(ready).toBeDefined();
    const node = (ready as DomainEvent & { kind: "NodeReady" }).node;
    // Replay the same run second by second around its return.
    const again = new ClusterRun(blueprint, { sources: ["kube-state-metrics"] });
    const gpus: { t: number; capacity?: number; allocatable?: number }[] = [];
    drive(again, every(1_000, { fromMs: (ready?.t ?? 0) - 2_000, toMs: (ready?.t ?? 0) + 30_000 }), (frame) => {
      const of = (family: string) =>
        frame.targets
          .find((t) => t.target.job === "kube-state-metrics" && t.target.port === 8080)
          ?.samples.find((s) => s.family.name === family && s.labels.node === node && s.labels.resource === "nvidia_com_gpu")?.value;
      gpus.push({
        t: frame.simulatedMs - (ready?.t ?? 0),
        capacity: of("kube_node_status_capacity"),
        allocatable: of("kube_node_status_allocatable"),
      });
    });
    const registeredAt = gpus.find((g) => g.t >= 0 && g.capacity === 8)?.t ?? Number.NaN;
    expect(registeredAt).toBeGreaterThanOrEqual(5_000);
    expect(registeredAt).toBeLessThanOrEqual(21_000);
    for (const g of gpus.filter((g) => g.t >= 0 && g.t < registeredAt - 1_000))
      expect([g.capacity, g.allocatable], `${g.t} ms`).toEqual([0, 0]);
    expect(gpus.at(-1)).toMatchObject({ capacity: 8, allocatable: 8 });
    const boundThere = events.filter((e) => e.kind === "WorkloadStarted" && e.t >= (ready?.t ?? 0) && e.pods.some((p) => p.node === node));
    // The job pending for those GPUs binds once they are listed, not in the cycle after NodeReady.
    expect(boundThere.length).toBeGreaterThan(0);
    for (const e of boundThere) expect(e.t - (ready?.t ?? 0)).toBeGreaterThanOrEqual(registeredAt - 1_000);
  });
});
