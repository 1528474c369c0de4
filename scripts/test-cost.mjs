// Reads what `just test-cost` recorded (vitest.file-cost.ts: a line per test file) and prints where
// the suite's CPU went: in all, file by file (the file's own and its children's), and over time —
// how many cores the files kept busy in each 5 s of the run, which shows whether the suite's wall
// time is its CPU over the cores or waits (vitest.config.ts, maxWorkers).
// With the machine's speed before and after the suite, where `just test-cost` wrote it beside the
// file (.test-cost.speed: scripts/reference-speed.mjs), since the suite's CPU follows it.
// Usage: node scripts/test-cost.mjs [.test-cost.tsv] [files to list]
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const [path = `${root}.test-cost.tsv`, shown = "15"] = process.argv.slice(2);
const files = readFileSync(path, "utf8")
  .trim()
  .split("\n")
  .map((line) => {
    const [file, own, children, wall, at, worker, gc] = line.split("\t");
    return {
      file: relative(root, file ?? ""),
      own: Number(own),
      children: Number(children),
      wall: Number(wall),
      at: Number(at),
      worker,
      gc: Number(gc ?? 0),
    };
  });
const seconds = (ms) => (ms / 1000).toFixed(1);
const sum = (key) => files.reduce((total, f) => total + f[key], 0);
const startedAt = Math.min(...files.map((f) => f.at));
const endedAt = Math.max(...files.map((f) => f.at + f.wall));

console.log(
  `${files.length} files over ${seconds(endedAt - startedAt)} s in ${new Set(files.map((f) => f.worker)).size} workers: ` +
    `their own CPU ${seconds(sum("own"))} s (garbage collection pauses ${seconds(sum("gc"))} s of wall time: with more workers than cores, a pause also waits for a core), their children's ${seconds(sum("children"))} s ` +
    "(vitest's own process is not counted; each worker's first file carries the import of the sources and the SDK)",
);
console.log("\nown s  gc wall s  children s  wall s  file");
for (const f of [...files].sort((a, b) => b.own + b.children - (a.own + a.children)).slice(0, Number(shown)))
  console.log(
    `${seconds(f.own).padStart(5)}  ${seconds(f.gc).padStart(9)}  ${seconds(f.children).padStart(10)}  ${seconds(f.wall).padStart(6)}  ${f.file}`,
  );

// Each file's CPU spread evenly over its wall time, summed in 5 s bins: the cores kept busy.
const BIN_MS = 5000;
const bins = new Array(Math.ceil((endedAt - startedAt) / BIN_MS)).fill(0);
for (const f of files) {
  const from = f.at - startedAt;
  const to = from + f.wall;
  const rate = (f.own + f.children) / Math.max(1, f.wall);
  for (let b = Math.floor(from / BIN_MS); b < bins.length && b * BIN_MS < to; b++)
    bins[b] += rate * Math.max(0, Math.min(to, (b + 1) * BIN_MS) - Math.max(from, b * BIN_MS));
}
console.log("\ncores busy in each 5 s from the first file's start (each file's CPU spread evenly over its wall time):");
console.log(bins.map((busy, b) => `${b * 5}s ${(busy / BIN_MS).toFixed(2)}`).join("  "));

const speedFile = path.replace(/\.tsv$/, ".speed");
if (existsSync(speedFile)) {
  const [before, after] = readFileSync(speedFile, "utf8").trim().split("\n");
  console.log(
    `\nthis machine's speed: the reference workload (scripts/reference-speed.mjs) took ${before} s before the suite and ${after} s after; ` +
      "the suite's CPU follows it, so compare suites measured at the same reference speed",
  );
}
