/**
 * The order test files start in: longest first, so no long file starts last and ends the suite
 * alone. vitest's own sequencer does so from the durations it cached on the last run; a file it has
 * no duration for (every file in a fresh clone, as in CI) takes its duration from
 * vitest.durations.json, the slow files of a reference run (scripts/test-durations.mjs), and the
 * rest keep vitest's fallback, the largest file first, after them. A file that failed last time
 * starts first, as with vitest's own.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const reference: Record<string, number> = JSON.parse(readFileSync(new URL("./vitest.durations.json", import.meta.url), "utf8"));

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const cache = this.ctx.cache;
    const path = (file: TestSpecification) => relative(root, file.moduleId);
    const last = (file: TestSpecification) => cache.getFileTestResults(`${file.project.name}:${path(file)}`);
    /** Milliseconds: the last run's, else the reference run's, else unknown. */
    const expected = (file: TestSpecification): number | undefined => {
      const seconds = reference[path(file)];
      return last(file)?.duration ?? (seconds === undefined ? undefined : seconds * 1000);
    };
    const failed = (file: TestSpecification): number => (last(file)?.failed === true ? 1 : 0);
    const known = files.filter((file) => expected(file) !== undefined);
    const unknown = files.filter((file) => expected(file) === undefined);
    known.sort((a, b) => failed(b) - failed(a) || (expected(b) as number) - (expected(a) as number));
    return [...known, ...(await super.sort(unknown))];
  }
}
