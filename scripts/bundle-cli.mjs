#!/usr/bin/env node
// The gpusynth command's bundle: the built packages (packages/*/dist, from `tsc -b`) and their
// npm dependencies in a few files, packages/cli/bundle/, which bin/gpusynth.js runs when it is as
// new as the build. Node 20 has no compile cache, so a command started from dist/ resolves, reads
// and compiles some 560 modules first: about 0.45 s of CPU before `run` does anything, 0.2 s from
// the bundle (bench/results/cli-startup.md). The test suite starts the command about fifty times.
//
// The bundle keeps dist/'s layout where code finds files by its own URL: its chunks sit two
// folders below the repository as dist/'s files do (repo-paths.ts, main.ts's ../package.json), and
// each worker thread's script is an entry of its own beside them (inventory-worker.main.js,
// shard-worker.main.js, started by inventory-worker.js and shard-worker.js: workerScript resolves
// "./<name>.js" next to the calling chunk).
//
// The bundle is CommonJS, so that bin/code-cache.js can compile its chunks with V8's code cache:
// once the bundle is whole, a short live run of lab.yaml (its OTLP pushed to a receiver here that
// takes everything) writes each chunk's cache, what it compiled, beside it, and `validate` then
// writes those of the chunks the run did not load. Measured in
// bench/results/cli-startup.md. A priming run that fails leaves a bundle without caches, which
// runs as fast as before them: the build says so and goes on.
//
// Skipped while the bundle is as new as the build (bundle-state.js); --force bundles anyway.
import { spawn } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { BUNDLE_DIR, BUNDLE_STAMP, bundleIsCurrent } from "../packages/cli/bin/bundle-state.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const main = `${root}packages/cli/dist/main.js`;
if (!existsSync(main)) throw new Error(`bundle-cli: ${main} is missing: build the TypeScript first (tsc -b)`);
if (!process.argv.includes("--force") && bundleIsCurrent()) process.exit(0);

const out = fileURLToPath(BUNDLE_DIR);
/** The worker threads' scripts, each an entry of the bundle. */
const WORKERS = ["inventory-worker", "shard-worker"];
rmSync(out, { recursive: true, force: true });
await build({
  input: {
    main,
    [`${WORKERS[0]}.main`]: `${root}packages/cli/dist/inventory-worker.js`,
    [`${WORKERS[1]}.main`]: `${root}packages/emit/dist/workers/shard-worker.js`,
  },
  platform: "node",
  // A dynamic import of a built-in (the SDK's HTTP transport loads node:http so) as a require: a
  // chunk compiled by code-cache.js has no loader for import().
  output: { dir: out, format: "cjs", entryFileNames: "[name].js", chunkFileNames: "[name]-[hash].js", dynamicImportInCjs: false },
  logLevel: "warn",
});
// packages/cli is an ES module package; its bundle's chunks are CommonJS.
writeFileSync(`${out}package.json`, `${JSON.stringify({ type: "commonjs" })}\n`);
// A worker thread's script (`./<name>.js`, as workerScript finds it) loads its entry with the code
// cache, as bin/gpusynth.js loads the command's: a thread compiles the chunks anew otherwise.
for (const name of WORKERS)
  writeFileSync(
    `${out}${name}.js`,
    `// The ${name} thread's entry (${name}.main.js), its chunks compiled with V8's code cache.\n` +
      `require("../bin/code-cache.js").requireBundle(require("node:url").pathToFileURL(\`\${__dirname}/${name}.main.js\`));\n`,
  );
// Written last, so a bundle that failed half-way is never taken for current.
writeFileSync(BUNDLE_STAMP, "");
await primeCodeCache();

/**
 * Writes the chunks' code caches from runs as the tests and a user's first tries run the command:
 * live, lab.yaml's warm-up and two intervals, its scrape server listening, pushing OTLP/HTTP
 * (metrics and logs) to a receiver that takes everything; then `validate`, for the chunks the run
 * did not load (a chunk's cache is written by the first run that compiled it).
 */
async function primeCodeCache() {
  let received = 0;
  const receiver = createServer((request, response) => {
    received++;
    request.resume();
    request.on("end", () => response.writeHead(200, { "content-type": "application/x-protobuf" }).end());
  });
  await new Promise((listening) => receiver.listen(0, "127.0.0.1", listening));
  const endpoint = `http://127.0.0.1:${receiver.address().port}`;
  const live = ["run", "--speed", "60", "--interval", "500ms", "--duration", "1s", "--listen", "127.0.0.1:0", "--otlp-endpoint", endpoint];
  const ran = await primingRun(live);
  receiver.close();
  // A run that could not push compiled less of what runs than it should.
  if (ran && received === 0) console.warn("bundle-cli: the run that writes the code caches pushed nothing to its receiver");
  await primingRun(["validate"]);
}

/** `gpusynth <args> blueprints/lab.yaml`, writing the caches of the chunks it compiles; false (and a warning) where it failed. */
async function primingRun(args) {
  // The run as the build means it, whatever OTEL_* or GPUSYNTH_* settings the shell holds.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(OTEL|GPUSYNTH)_/.test(name)));
  env.GPUSYNTH_CODE_CACHE = "write";
  const run = spawn(process.execPath, [`${root}packages/cli/bin/gpusynth.js`, ...args, `${root}blueprints/lab.yaml`], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  run.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const status = await new Promise((exited) => run.on("close", exited));
  if (status !== 0)
    console.warn(
      `bundle-cli: gpusynth ${args[0]}, which writes code caches, exited with ${status}; the chunks it would have cached run without\n${stderr}`,
    );
  return status === 0;
}
