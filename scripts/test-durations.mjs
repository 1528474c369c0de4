// Writes vitest.durations.json: how long each slow test file took in the last whole run, the order a
// clean clone's first run starts its files in. vitest orders files by the durations it cached on
// the last run, longest first, so no long file starts last; a fresh clone (CI) has no cache, and
// vitest's fallback, largest file first, started the suite's longest (live-delivery.test.ts, a
// minute of waiting on a live run) after 76 s of 150, last to end (vitest.sequencer.ts reads this
// file). Rerun after a file's duration changed a lot: `npx just test && node scripts/test-durations.mjs`.
//
// The durations are vitest's own cache's (node_modules/.vite/vitest/<hash>/results.json), which count
// a file's beforeAll hooks: the JSON report's start and end of a file count only its tests, and
// gave journeys.test.ts, whose beforeAll pushes seven scenarios into Prometheus, 3 s of its 33.
// The report (.vitest-report.json, written by `just test`) says which files the last run held, so
// a single file run since cannot pass for the suite.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Files shorter than this keep vitest's fallback order: they fill the gaps at the end. */
const SLOW_SECONDS = 3;

const report = JSON.parse(readFileSync(`${root}.vitest-report.json`, "utf8"));
const lastRun = new Set(report.testResults.map((file) => relative(root, file.name)));
if (lastRun.size < 50) throw new Error(`.vitest-report.json holds ${lastRun.size} files: run the whole suite first (npx just test)`);

const cacheDir = join(root, "node_modules/.vite/vitest");
const [cache] = readdirSync(cacheDir)
  .map((hash) => join(cacheDir, hash, "results.json"))
  .filter((file) => statSync(file, { throwIfNoEntry: false }) !== undefined)
  .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
if (cache === undefined) throw new Error(`no vitest results cache under ${cacheDir}: run the suite first (npx just test)`);
/** vitest's cache: [":<file>", { duration (ms), failed }] pairs, the project's name before the colon. */
const cached = JSON.parse(readFileSync(cache, "utf8")).results;

const durations = Object.fromEntries(
  cached
    .map(([key, { duration }]) => [key.slice(key.indexOf(":") + 1), Math.round(duration / 100) / 10])
    .filter(([file, seconds]) => lastRun.has(file) && seconds >= SLOW_SECONDS)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b)),
);
writeFileSync(`${root}vitest.durations.json`, `${JSON.stringify(durations, null, 2)}\n`);
console.log(`vitest.durations.json: ${Object.keys(durations).length} files of ${SLOW_SECONDS} s or more`);
