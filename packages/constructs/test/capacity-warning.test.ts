/**
 * KAI warns, in every snapshot, of each node whose GPU capacity and allocatable differ
 * (node_info.go:127 at v0.13.0, V(2), WARN): in gpu-fault, the nodes whose device plugin dropped a
 * GPU are the ones kube-state-metrics shows with fewer allocatable than capacity GPUs, cycle after
 * cycle; a scenario whose GPUs all stay advertised writes no WARN line.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";

const scenario = (name: string) =>
  loadBlueprint(fileURLToPath(new URL(`../../../blueprints/scenarios/${name}.yaml`, import.meta.url))).blueprint;
const MINUTE = 60_000;
const WARN =
  /^\S+\t\u001b\[33mWARN\u001b\[0m\tnode_info\/node_info\.go:127\t\[\S+\] For node (\S+), the capacity and allocatable are different\. Capacity CPU: (\d+) \(cores\), memory: ([\d.]+) \(GB\), Gpus: (\d+), pods: 110, Allocatable CPU: \2 \(cores\), memory: ([\d.]+) \(GB\), Gpus: (\d+), pods: 110$/;

/** Per frame: the nodes KAI's last cycle warned of, with their GPUs, and those kube-state-metrics shows short. */
function warningsAndStatus(name: string, hours: number) {
  const run = new ClusterRun(scenario(name), { logs: { events: false, scheduler: true } });
  const seen: { t: number; warned: string[]; short: string[]; warnLines: number }[] = [];
  drive(run, every(MINUTE, { toMs: hours * 60 * MINUTE }), (frame: Frame) => {
    // The frame's last complete cycle: the lines after its last "Session" line.
    let warned: string[] = [];
    let warnLines = 0;
    for (const r of frame.logs) {
      if (r.body.includes("framework/session.go:353")) warned = [];
      if (!r.body.includes("WARN")) continue;
      warnLines++;
      const m = WARN.exec(r.body);
      expect(m, r.body).not.toBeNull();
      const [, node, , , capacity, , allocatable] = m as RegExpExecArray;
      expect(Number(allocatable)).toBeLessThan(Number(capacity));
      warned.push(`${node} ${allocatable}/${capacity}`);
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
