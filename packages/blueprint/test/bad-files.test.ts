/** Files that are not blueprints at all: a clear message, never a crash or a hang. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BlueprintError, loadBlueprint, MAX_BLUEPRINT_BYTES } from "@gpusynth/blueprint";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "gpusynth-bad-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function errorFor(content: string | Buffer | null, name = "bp.yaml"): BlueprintError {
  const file = join(dir, name);
  if (content !== null) writeFileSync(file, content);
  try {
    loadBlueprint(file);
  } catch (error) {
    if (error instanceof BlueprintError) return error;
    throw error;
  }
  throw new Error("expected the blueprint to be rejected");
}

const bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
for (let i = 0; i < 9; i++)
  bomb.push(
    `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${new Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(",")}]`,
  );

describe.each([
  { name: "a missing file", content: null, file: "missing.yaml", message: /expected a readable blueprint YAML file, found no such file/ },
  { name: "an empty file", content: "", file: "empty.yaml", message: /found an empty file/ },
  {
    name: "only whitespace and comments",
    content: "  \n# nothing\n",
    file: "blank.yaml",
    message: /expected a YAML mapping.*found an empty document/,
  },
  {
    name: "malformed YAML",
    content: "cluster: [1, 2\nseed: }",
    file: "malformed.yaml",
    message: /:2:\d+: error: \(document root\): expected well-formed YAML/,
  },
  { name: "a plain scalar", content: "hello", file: "scalar.yaml", message: /expected a YAML mapping.*found a string/ },
  { name: "a list instead of a mapping", content: "- 1\n- 2\n", file: "list.yaml", message: /expected a YAML mapping.*found a list/ },
  {
    name: "a huge file",
    content: `# ${"x".repeat(MAX_BLUEPRINT_BYTES + 10)}\n`,
    file: "huge.yaml",
    message: /expected a blueprint of at most \d+ bytes/,
  },
  {
    name: "deeply nested flow collections",
    content: `a: ${"[".repeat(100_000)}`,
    file: "deep-flow.yaml",
    message: /expected nesting of at most 64 levels/,
  },
  {
    name: "deeply nested block mappings",
    content: Array.from({ length: 200 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n"),
    file: "deep-block.yaml",
    message: /expected nesting of at most 64 levels/,
  },
  {
    name: "block mappings nested 900 levels (deep enough to overflow the parser's stack)",
    content: Array.from({ length: 900 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n"),
    file: "deep-block-900.yaml",
    message:
      /deep-block-900\.yaml:66: error: \(document root\): expected nesting of at most 64 levels, found more than 64 levels of indentation/,
  },
  {
    name: "a compact sequence nested a million levels on one line",
    content: `${"- ".repeat(1_000_000)}x`,
    file: "deep-dashes.yaml",
    message: /deep-dashes\.yaml:1: error: .*expected nesting of at most 64 levels/,
  },
  {
    name: "deeply nested flow collections, located",
    content: `a: 1\nb: ${"[".repeat(100)}`,
    file: "deep-flow-line.yaml",
    message: /deep-flow-line\.yaml:2: error: .*found 100 levels of brackets/,
  },
  { name: "an alias bomb", content: bomb.join("\n"), file: "bomb.yaml", message: /expected YAML without excessive alias expansion/ },
  { name: "binary garbage", content: Buffer.from([0, 159, 146, 150, 255, 0, 1, 2]), file: "garbage.yaml", message: /error/ },
])("$name", ({ content, file, message }) => {
  it("is rejected with a clear message", () => {
    const error = errorFor(content, file);
    expect(error.message).toMatch(message);
    expect(error.message).toContain(file);
  });
});

it("accepts block nesting up to the limit (the estimate counts the leaf scalar)", () => {
  const nested = `a:\n${Array.from({ length: 63 }, (_, i) => `${" ".repeat(i + 1)}k${i}:`).join("\n")} leaf\n`;
  expect(errorFor(nested, "nested-64.yaml").message).not.toMatch(/nesting/);
});

it.each([["a device that never ends", "/dev/zero", "a character device"]])("refuses %s at once, without reading it", (_, file, kind) => {
  let error: unknown;
  try {
    loadBlueprint(file);
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(BlueprintError);
  expect((error as Error).message).toContain(
    `${file}: error: (document root): expected a blueprint YAML file (a regular file), found ${kind}`,
  );
});

it("rejects a directory", () => {
  expect(errorFor(null, ".").message).toMatch(/expected a blueprint YAML file \(a regular file\), found a directory/);
});
