// Writes vitest.durations.json: how long each slow test file took in the last run (.vitest-report.json,
// written by `just test`), the order a clean clone's first run starts its files in. vitest orders
// files by the durations it cached on the last run, longest first, so no long file starts last; a
// fresh clone (CI) has no cache, and vitest's fallback, largest file first, started the suite's
// longest (live-delivery.test.ts, a minute of waiting on a live run) after 76 s of 150, last to end
// (vitest.sequencer.ts reads this file). Rerun after a file's duration changed a lot:
// `npx just test && node scripts/test-durations.mjs`.
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Files shorter than this keep vitest's fallback order: they fill the gaps at the end. */
const SLOW_SECONDS = 3;

const report = JSON.parse(readFileSync(`${root}.vitest-report.json`, "utf8"));
const durations = Object.fromEntries(
  report.testResults
    .map((file) => [relative(root, file.name), Math.round((file.endTime - file.startTime) / 100) / 10])
    .filter(([, seconds]) => seconds >= SLOW_SECONDS)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b)),
);
writeFileSync(`${root}vitest.durations.json`, `${JSON.stringify(durations, null, 2)}\n`);
console.log(`vitest.durations.json: ${Object.keys(durations).length} files of ${SLOW_SECONDS} s or more`);
