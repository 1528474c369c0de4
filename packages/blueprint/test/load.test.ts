/**
 * Loading a blueprint again: a process (the suite, check-signals, the report) keeps what it parsed
 * of each text, and every load still gets a blueprint of its own, read from the file as it is now.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { afterAll, describe, expect, it } from "vitest";

const lab = fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "gpusynth-load-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loading a blueprint again", () => {
  it("gives a blueprint of its own: a change to one load is not seen by the next", () => {
    const first = loadBlueprint(lab);
    const pool = first.blueprint.nodePools[0];
    if (pool === undefined) throw new Error("lab has a node pool");
    const nodes = pool.nodes;
    pool.nodes = nodes + 100;
    first.blueprint.projects.pop();
    const second = loadBlueprint(lab);
    expect(second.blueprint.nodePools[0]?.nodes).toBe(nodes);
    expect(second.blueprint.projects.length).toBe(first.blueprint.projects.length + 1);
    expect(second.warnings).not.toBe(first.warnings);
  });

  it("reads the file as it is now, not as it was first parsed", () => {
    const file = join(dir, "lab.yaml");
    copyFileSync(lab, file);
    const before = loadBlueprint(file).blueprint.cluster.name;
    writeFileSync(file, readFileSync(file, "utf8").replace(`name: ${before}`, "name: renamed"));
    expect(loadBlueprint(file).blueprint.cluster.name).toBe("renamed");
  });
});
