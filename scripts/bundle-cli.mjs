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
// Skipped while the bundle is as new as the build (bundle-state.js); --force bundles anyway.
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { BUNDLE_DIR, BUNDLE_STAMP, bundleIsCurrent } from "../packages/cli/bin/bundle-state.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const main = `${root}packages/cli/dist/main.js`;
if (!existsSync(main)) throw new Error(`bundle-cli: ${main} is missing: build the TypeScript first (tsc -b)`);
if (!process.argv.includes("--force") && bundleIsCurrent()) process.exit(0);

const out = fileURLToPath(BUNDLE_DIR);
rmSync(out, { recursive: true, force: true });
await build({
  input: {
    main,
    "inventory-worker": `${root}packages/cli/dist/inventory-worker.js`,
    "shard-worker": `${root}packages/emit/dist/workers/shard-worker.js`,
  },
  platform: "node",
  output: { dir: out, format: "esm", entryFileNames: "[name].js", chunkFileNames: "[name]-[hash].js" },
  logLevel: "warn",
});
// Written last, so a bundle that failed half-way is never taken for current.
writeFileSync(BUNDLE_STAMP, "");
