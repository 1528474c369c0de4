/**
 * The signal-fidelity comparison itself: it must catch undocumented names and labels, wrong
 * types and HELP texts, emitted PENDING families and documented families nobody emits — on the
 * real signals/ files and real inventories.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";
import { collectInventory, type Inventory } from "../src/inventory.js";
import { fidelityProblems } from "../src/signal-fidelity.js";
import { readSignals } from "../src/signals-doc.js";

const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const documented = readSignals(root("signals"));
const scenario = loadBlueprint(root("blueprints/scenarios/preemption-storm.yaml")).blueprint;
/** One run of the scenario; each test changes its own copy. */
const run = collectInventory(scenario, 4 * 3_600_000, 600_000);
const fresh = (): Inventory => structuredClone(run);

function mutate(change: (inventory: Inventory) => void): string[] {
  const inventory = fresh();
  change(inventory);
  return fidelityProblems([inventory], documented).filter((p) => !p.includes("no run emitted it"));
}

const family = (inventory: Inventory, name: string) => {
  const found = inventory.sources.flatMap((s) => s.families).find((f) => f.name === name);
  if (found === undefined) throw new Error(`${name} not emitted`);
  return found;
};

describe("signal fidelity", () => {
  it("reads every documented family with its status", () => {
    const byName = new Map(documented.map((d) => [d.name, d]));
    expect(byName.get("DCGM_FI_DEV_GPU_UTIL")).toMatchObject({
      area: "dcgm-exporter",
      type: "gauge",
      status: "emitted",
      help: "GPU utilization (in %).",
    });
    expect(byName.get("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL")?.status).toBe("PENDING");
    expect(byName.get("kube_pod_info")?.labels).toContain("priority_class");
  });

  it("passes on what the scenario emits", () => {
    expect(mutate(() => {})).toEqual([]);
  });

  it("reports an emitted label that signals/ does not document", () => {
    expect(mutate((i) => family(i, "DCGM_FI_DEV_GPU_UTIL").labels.push("gpu_uuid"))).toEqual([
      expect.stringMatching(/DCGM_FI_DEV_GPU_UTIL: label gpu_uuid is not documented/),
    ]);
  });

  it("reports an emitted family that signals/ does not document", () => {
    const problems = mutate((i) => {
      (i.sources[0] as Inventory["sources"][number]).families.push({
        id: "dcgm-exporter.made_up",
        name: "DCGM_FI_MADE_UP",
        type: "gauge",
        help: "",
        labels: [],
        maxSeries: 1,
      });
    });
    expect(problems).toEqual([expect.stringMatching(/DCGM_FI_MADE_UP: emitted but not documented/)]);
  });

  it("reports a source that goes by another name than its signals file and its ids", () => {
    const problems = mutate((i) => {
      const dcgm = i.sources.find((s) => s.area === "dcgm-exporter") as Inventory["sources"][number];
      i.sources[i.sources.indexOf(dcgm)] = { ...dcgm, area: "dcgm" };
    });
    expect(problems).toContainEqual(
      expect.stringMatching(/DCGM_FI_DEV_GPU_UTIL: emitted by the dcgm source but documented in signals\/dcgm-exporter\.md/),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/DCGM_FI_DEV_GPU_UTIL: id dcgm-exporter\.gpu_util is not named after its source \(dcgm\.<name>\)/),
    );
  });

  it("reports a wrong type and a changed HELP text", () => {
    const problems = mutate((i) => {
      Object.assign(family(i, "kai_total_preemption_attempts"), { type: "gauge" });
      Object.assign(family(i, "kube_pod_info"), { help: "[STABLE] Information about pods." });
    });
    expect(problems).toHaveLength(2);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/kai_total_preemption_attempts: emitted as gauge, documented as counter/),
        expect.stringMatching(/kube_pod_info: HELP "\[STABLE\] Information about pods\." differs/),
      ]),
    );
  });

  it("reports a PENDING family that a run emits", () => {
    const problems = mutate((i) => {
      (i.sources[0] as Inventory["sources"][number]).families.push({
        id: "dcgm-exporter.nvlink_bandwidth_total",
        name: "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        type: "counter",
        help: "Total number of NVLink bandwidth counters for all lanes.",
        labels: ["gpu"],
        maxSeries: 1,
      });
    });
    expect(problems).toEqual([expect.stringMatching(/emitted although signals\/dcgm-exporter\.md:\d+ marks it PENDING/)]);
  });

  it("reports a log field that signals/ does not document", () => {
    const problems = mutate((i) => i.logs.find((l) => l.receiver === "k8s_events")?.attributeKeys.push("k8s.event.type"));
    expect(problems).toEqual([
      expect.stringMatching(/k8s_events record attribute k8s\.event\.type is not documented in signals\/kubernetes-events\.md/),
    ]);
  });

  it("reports a documented family that no run emits", () => {
    const inventory = fresh();
    for (const source of inventory.sources)
      source.families.splice(0, source.families.length, ...source.families.filter((f) => f.name !== "kube_pod_owner"));
    expect(fidelityProblems([inventory], documented)).toContainEqual(
      expect.stringMatching(/kube_pod_owner is documented as emitted but no run emitted it/),
    );
  });
});
