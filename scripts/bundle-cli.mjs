#!/usr/bin/env node
// The gpusynth command's bundle: the built packages (packages/*/dist, from `tsc -b`) and their
// npm dependencies in a few files, packages/cli/bundle/, which bin/gpusynth.js runs when it is as
// new as the build. Node 20 has no compile cache, so a command started from dist/ resolves, reads
// and compiles some 560 modules first: about 0.45 s of CPU before `run` does anything, 0.2 s from
// the bundle (bench/results/cli-startup.md). The test suite starts the command about fifty times.
//
// The bundle keeps dist/'s layout where code finds files by its own URL: its chunks sit two
// folders below the repository as dist/'s files do (repo-paths.ts, main.ts's ../package.json), and
// each worker thread's script is an entry of its own beside them (inventory-worker.js,
// shard-worker.js: workerScript resolves "./<name>.js" next to the calling chunk).
//
// Skipped when the bundle is newer than every package's build (dist/.tsbuildinfo, which `tsc -b`
// rewrites only when it rebuilds that package); --force bundles anyway.
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const root = fileURLToPath(new URL("..", import.meta.url));
const packages = ["blueprint", "sim", "constructs", "emit", "cli"];
const out = `${root}packages/cli/bundle`;
/** Written last, so a bundle that failed half-way is never taken for current. */
const stamp = `${out}/.built`;

const newestBuild = Math.max(
  ...packages.map((name) => {
    const info = `${root}packages/${name}/dist/.tsbuildinfo`;
    if (!existsSync(info)) throw new Error(`bundle-cli: ${info} is missing: build the TypeScript first (tsc -b)`);
    return statSync(info).mtimeMs;
  }),
);
if (!process.argv.includes("--force") && existsSync(stamp) && statSync(stamp).mtimeMs >= newestBuild) process.exit(0);

rmSync(out, { recursive: true, force: true });
await build({
  input: {
    main: `${root}packages/cli/dist/main.js`,
    "inventory-worker": `${root}packages/cli/dist/inventory-worker.js`,
    "shard-worker": `${root}packages/emit/dist/workers/shard-worker.js`,
  },
  platform: "node",
  output: { dir: out, format: "esm", entryFileNames: "[name].js", chunkFileNames: "[name]-[hash].js" },
  logLevel: "warn",
});
writeFileSync(stamp, "");
