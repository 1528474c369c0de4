/**
 * Repository hygiene: the people named in blueprints (users) appear nowhere else but in
 * blueprints/ and tests; no committed file carries an absolute path of this machine or a
 * secret, or reaches outside the repository for what it cites or reads. (Project and department names are team words — "data", "platform", "capacity" — that
 * prose and code use too, so only user names are held to this.)
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { describe, expect, it } from "vitest";
import { namesIn, sensitiveNames } from "../src/leakcheck/sensitive.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const tracked = execFileSync("git", ["ls-files"], { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean);
// Screenshots (docs/report/*.png) are compressed pixels, not text: a name they seem to hold is
// chance in the deflate stream. The pages they show draw no user names (the report's test checks the page).
const outsideBlueprintsAndTests = tracked.filter(
  (f) => !f.startsWith("blueprints/") && !/(^|\/)test\//.test(f) && !f.startsWith("bench/results/") && !f.endsWith(".png"),
);
const text = (f: string) => readFileSync(join(root, f), "utf8");

describe("repository hygiene", () => {
  it("names blueprint users only in blueprints/ and tests", () => {
    const users = [
      ...new Map(
        tracked
          .filter((f) => /^blueprints\/.*\.yaml$/.test(f))
          .flatMap((f) => sensitiveNames(loadBlueprint(join(root, f)).blueprint))
          .filter((n) => n.kind === "user")
          .map((n) => [n.value, n]),
      ).values(),
    ];
    expect(users.length).toBeGreaterThan(800);
    const found = outsideBlueprintsAndTests.flatMap((f) => namesIn(text(f), users).map((n) => `${f}: ${n.value}`));
    expect(found).toEqual([]);
  });

  it("holds no absolute path of a developer's machine and no secret", () => {
    const problems: string[] = [];
    for (const f of outsideBlueprintsAndTests) {
      const content = text(f);
      if (/(^|[\s"'`(])\/(work|home|Users|root)\//m.test(content)) problems.push(`${f}: absolute machine path`);
      if (/-----BEGIN [A-Z ]*PRIVATE KEY-----|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36}|xox[baprs]-[A-Za-z0-9-]{10,}/.test(content))
        problems.push(`${f}: secret`);
    }
    expect(problems).toEqual([]);
  });

  it("cites and reads nothing outside the repository: no ../shared notes, no folder beside the checkout", () => {
    // One path may: where the tests look for the Run:ai spec by default, which is vendor data
    // not copied here (packages/emit/test/runai-spec.ts; GPUSYNTH_RUNAI_SPEC overrides it).
    const allowed = "packages/emit/test/runai-spec.ts";
    const outside = /(^|[^\w.])\.\.\/shared\b|shared\/(references|vendor-specs)\//;
    const found = tracked
      .filter((f) => f !== allowed && f !== "packages/cli/test/hygiene.test.ts" && !/\.(png|gz)$/.test(f))
      .filter((f) => outside.test(text(f)));
    expect(found).toEqual([]);
  });
});
