import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every } from "@gpusynth/constructs";
const { blueprint } = loadBlueprint("blueprints/scenarios/preemption-storm.yaml");
const run = new ClusterRun(blueprint, { metrics: false, logs: true });
run.simulation.onEvent(e => { if ((e.workload?.name === "borrow-b") && e.kind !== "SchedulingCycle" && e.kind !== "WorkloadUnschedulable") console.log(e.t/1000, e.kind, e.terminatesAt ?? "", (e.pods ?? []).map(p => p.name + "/" + p.uid.slice(0,8)).join(",")); });
drive(run, every(10 * 60000, { toMs: 3 * 3600000 }), (frame) => {
  for (const r of frame.logs) { if (r.receiver === "k8s_events" && (r.resource?.["k8s.object.name"] ?? "").startsWith("borrow-b")) console.log(new Date(r.timeMs).toISOString().slice(11, 19), r.attributes["k8s.event.reason"], r.resource["k8s.object.uid"]?.slice(0,8), r.body.slice(0,90)); }
});
