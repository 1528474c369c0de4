/**
 * A series keeps its label set — the object encoders keep its encoded bytes in — from one collect
 * to the next while its subject is collected: by a key naming the subject, until a collect does
 * not meet it; by the simulation's own object for it, or for its parts (a node's GPUs), for as long
 * as the object lives.
 */
import { describe, expect, it } from "vitest";
import { KeptLabelSets, type MetricFamily, type SubjectLabelSets } from "../src/catalogue.js";

const FAMILY: MetricFamily = { id: "test.family", name: "test_family", type: "gauge", help: "", labels: ["node", "gpu"] };
const OTHER: MetricFamily = { ...FAMILY, id: "test.other", name: "test_other" };

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

  it("keep an object subject's label sets for as long as the object lives, each family's its own", () => {
    const kept = new KeptLabelSets();
    const gpu = { index: 0 };
    kept.startCollect();
    const sets = kept.subject(gpu);
    const a = kept.labelsIn(sets, FAMILY, { node: "n1", gpu: "0" });
    const b = kept.labelsIn(sets, OTHER, { node: "n1", gpu: "0" });
    expect(a).not.toBe(b);
    expect(b).toEqual({ node: "n1", gpu: "0" });
    for (let i = 0; i < 3; i++) kept.startCollect();
    expect(kept.of(gpu, FAMILY, { node: "n1", gpu: "0" })).toBe(a);
    expect(kept.labelsIn(kept.subject(gpu), OTHER, { node: "n1", gpu: "0" })).toBe(b);
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
});
