// The command's bundle loaded with V8's code cache. Node.js 20 keeps no compiled code between
// processes (module.enableCompileCache came in 22), so every `gpusynth` process parsed the
// bundle's few megabytes and compiled each function it ran anew: about a fifth of the CPU of a
// two-second live run of lab.yaml (bench/results/cli-startup.md). V8 can hand back what a script compiled, the functions that ran included
// (vm.Script#createCachedData), and take it again at the next compile of the same source; so the
// bundle is CommonJS (scripts/bundle-cli.mjs), each of its chunks compiled here with its cache
// beside it (`<chunk>.v8-cache`), written once by the build from a representative run. A worker
// thread's script in the bundle loads its entry through here too (scripts/bundle-cli.mjs).
//
// A cache V8 does not accept (another Node.js, other V8 flags, a chunk rebuilt since) is ignored
// and the chunk compiled as without one: the cache only ever saves time. GPUSYNTH_CODE_CACHE=off
// loads the bundle without it (bench/cli-startup.mjs compares the two); =write writes the cache of
// each chunk that had none when the process exits (the build's priming runs).
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";

/** Where a chunk's compiled code is kept. */
export const cacheFileOf = (chunk) => `${chunk}.v8-cache`;

/** Each chunk this process compiled here, and whether V8 took its cache (a test reads it). */
const compiled = [];
export const chunksCompiled = () => [...compiled];

/** The bundle's entry module `entry` (a file URL) required, its chunks compiled with their caches. */
export function requireBundle(entry, mode = process.env.GPUSYNTH_CODE_CACHE) {
  const main = fileURLToPath(entry);
  if (mode === "off") return createRequire(main)(main);
  const folder = `${dirname(main)}${sep}`;
  const written = [];
  const compile = Module.prototype._compile;
  // CommonJS compiles every file through here; only the bundle's chunks take the cache.
  Module.prototype._compile = function compileWithCache(content, filename) {
    if (!filename.startsWith(folder)) return compile.call(this, content, filename);
    // The bundle has no import() (scripts/bundle-cli.mjs makes each a require), which a Script
    // without a loader for it could not run.
    const cachedData = cachedDataOf(filename);
    const script = new Script(Module.wrap(content), { filename, cachedData });
    compiled.push({ chunk: filename, cached: cachedData !== undefined && !script.cachedDataRejected });
    // A chunk whose cache V8 took keeps it: an earlier priming run compiled it for a larger run.
    if (mode === "write" && (cachedData === undefined || script.cachedDataRejected)) written.push({ filename, script });
    const wrapper = script.runInThisContext({ displayErrors: true });
    return wrapper.call(this.exports, this.exports, createRequire(filename), this, filename, dirname(filename));
  };
  if (mode === "write")
    process.on("exit", () => {
      for (const { filename, script } of written) writeCache(filename, script);
    });
  return createRequire(main)(main);
}

function cachedDataOf(chunk) {
  try {
    return readFileSync(cacheFileOf(chunk));
  } catch {
    return undefined;
  }
}

/** What `script` compiled, the functions that ran included; renamed into place whole. */
function writeCache(chunk, script) {
  const file = cacheFileOf(chunk);
  writeFileSync(`${file}.${process.pid}`, script.createCachedData());
  renameSync(`${file}.${process.pid}`, file);
}
