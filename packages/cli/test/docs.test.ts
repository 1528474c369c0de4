/**
 * The documentation tells the truth: every gpusynth command it shows exists and explains
 * itself, every relative link resolves, and the environment variables it lists are exactly
 * those the code reads.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { captureOutput } from "./helpers.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const docs = [
  "README.md",
  ...readdirSync(join(root, "docs")).map((f) => `docs/${f}`),
  ...readdirSync(join(root, "signals")).map((f) => `signals/${f}`),
].filter((f) => f.endsWith(".md"));
const text = (file: string) => readFileSync(join(root, file), "utf8");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

describe("README and docs/", () => {
  const commands = [
    ...new Set(docs.flatMap((f) => [...text(f).matchAll(/(?:npx |`)gpusynth ([a-z][a-z-]+)/g)].map((m) => m[1] as string))),
  ];

  it("show only commands that exist and have --help", async () => {
    expect(commands).toEqual(expect.arrayContaining(["run", "validate", "report", "calibrate", "leakcheck", "fidelity"]));
    for (const command of commands) {
      const { output, text: printed } = captureOutput();
      expect(await main([command, "--help"], output), `gpusynth ${command} --help`).toBe(0);
      expect(printed.out).toContain(`Usage: gpusynth ${command}`);
    }
  });

  it("link only to files that exist", () => {
    const broken: string[] = [];
    for (const file of docs) {
      for (const [, target] of text(file).matchAll(/\]\(([^)]+)\)/g)) {
        if (target === undefined || /^[a-z]+:/.test(target) || target.startsWith("#")) continue;
        const path = join(root, dirname(file), (target.split("#")[0] as string).trim());
        if (!existsSync(path)) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("list exactly the environment variables the code reads", () => {
    const read = new Set(
      readdirSync(join(root, "packages"))
        .flatMap((p) => (existsSync(join(root, "packages", p, "src")) ? sourceFiles(join(root, "packages", p, "src")) : []))
        .flatMap((f) =>
          [...readFileSync(f, "utf8").matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)|\["([A-Z][A-Z0-9_]+)"\])/g)].map(
            (m) => (m[1] ?? m[2]) as string,
          ),
        ),
    );
    const section = text("docs/emission.md").split("## Environment")[1]?.split("\n## ")[0] ?? "";
    const documented = new Set([...section.matchAll(/^\| `([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1] as string));
    expect(read.size).toBeGreaterThan(0);
    expect([...documented].sort()).toEqual([...read].sort());
  });
});
