/**
 * A series keeps its label set — the object encoders keep its encoded bytes in — from one collect
 * to the next while its subject is collected: by a key naming the subject, until a collect does
 * not meet it; by the simulation's own object for it, or for its parts (a node's GPUs), for as long
 * as the object lives.
 */
import { describe, expect, it } from "vitest";
import { KeptLabelSets, type MetricFamily, type Sample, SharedLabelSets, type SubjectLabelSets } from "../src/catalogue.js";

const FAMILY: MetricFamily = { id: "test.family", name: "test_family", type: "gauge", help: "", labels: ["node", "gpu"] };
const OTHER: MetricFamily = { ...FAMILY, id: "test.other", name: "test_other" };
const NODE_ONLY: MetricFamily = { ...FAMILY, id: "test.node", name: "test_node", labels: ["node"] };

describe("kept label sets", () => {
  it("keep a keyed subject's label set while collects meet it, and forget it after one that does not", () => {
    const kept = new KeptLabelSets();
    kept.startCollect();
    const first = kept.of("gpu/n1/0", FAMILY, { node: "n1", gpu: "0" });
    expect(first).toEqual({ node: "n1", gpu: "0" });
    kept.startCollect();
    expect(kept.of("gpu/n1/0", FAMILY, { node: "n1", gpu: "0" })).toBe(first);
    // A collect that does not meet the subject, then one that does: a new label set.
    kept.startCollect();
    kept.startCollect();
    const again = kept.of("gpu/n1/0", FAMILY, { node: "n1", gpu: "0" });
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it("keep an object subject's label sets for as long as the object lives, one for each set of labels its families carry", () => {
    const kept = new KeptLabelSets();
    const gpu = { index: 0 };
    kept.startCollect();
    const sets = kept.subject(gpu);
    const a = kept.labelsIn(sets, FAMILY, { node: "n1", gpu: "0" });
    // Another family with the same labels shares the label set; one with other labels has its own.
    expect(kept.labelsIn(sets, OTHER, { node: "n1", gpu: "0" })).toBe(a);
    const c = kept.labelsIn(sets, NODE_ONLY, { node: "n1", gpu: "0" });
    expect(c).not.toBe(a);
    expect(c).toEqual({ node: "n1" });
    for (let i = 0; i < 3; i++) kept.startCollect();
    expect(kept.of(gpu, FAMILY, { node: "n1", gpu: "0" })).toBe(a);
    expect(kept.labelsIn(kept.subject(gpu), NODE_ONLY, { node: "n1", gpu: "0" })).toBe(c);
  });

  it("keep an object's parts' label sets by their place in it, each part its own, for as long as the object lives", () => {
    const kept = new KeptLabelSets();
    const node = { gpus: [{ index: 0 }, { index: 1 }] };
    kept.startCollect();
    const [first, second] = kept.partsOf(node, node.gpus.length);
    const a = kept.labelsIn(first as SubjectLabelSets, FAMILY, { node: "n1", gpu: "0" });
    const b = kept.labelsIn(second as SubjectLabelSets, FAMILY, { node: "n1", gpu: "1" });
    expect(a).not.toBe(b);
    for (let i = 0; i < 3; i++) kept.startCollect();
    const again = kept.partsOf(node, node.gpus.length);
    expect(kept.labelsIn(again[0] as SubjectLabelSets, FAMILY, { node: "n1", gpu: "0" })).toBe(a);
    expect(kept.labelsIn(again[1] as SubjectLabelSets, FAMILY, { node: "n1", gpu: "1" })).toBe(b);
    // Another object, or the same with another number of parts: label sets of their own.
    expect(kept.partsOf({ gpus: node.gpus }, 2)[0]?.get(FAMILY)).toBeUndefined();
    expect(kept.partsOf(node, 3)[0]?.get(FAMILY)).toBeUndefined();
  });

  it("made together (a pod's families), share one label set among the series with the same labels", () => {
    const shared = new SharedLabelSets();
    shared.add(FAMILY, { node: "n1", gpu: "0", pod: "p" }, 1);
    shared.add(OTHER, { node: "n1", gpu: "0" }, 2, 1_000);
    shared.add(NODE_ONLY, { node: "n1", gpu: "0" }, 3);
    const [a, b, c] = shared.series.samples() as [Sample, Sample, Sample];
    expect(b.labels).toBe(a.labels);
    expect(c.labels).not.toBe(a.labels);
    expect([a, b, c].map((s) => [s.family.name, s.labels, s.value, s.startMs])).toEqual([
      ["test_family", { node: "n1", gpu: "0" }, 1, undefined],
      ["test_other", { node: "n1", gpu: "0" }, 2, 1_000],
      ["test_node", { node: "n1" }, 3, undefined],
    ]);
    // The same labels in another order are another label set: its series is written in its own order.
    const reordered: MetricFamily = { ...FAMILY, id: "test.reordered", name: "test_reordered", labels: ["gpu", "node"] };
    expect(shared.of(reordered, { node: "n1", gpu: "0" })).not.toBe(a.labels);
  });
});
