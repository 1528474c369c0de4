import { availableParallelism } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin } from "vitest/config";
import { LongestFirst } from "./vitest.sequencer.js";

const root = dirname(fileURLToPath(import.meta.url));
/** A source file of a package, by the package and its path under src/ without the extension. */
const SOURCE_FILE = /\/packages\/([^/]+)\/src\/(.+)\.[jt]s$/;
/** A package's built files (tsc -b), which Node.js loads itself. */
const BUILT_FILE = /\/packages\/[^/]+\/dist\//;

/**
 * The tests run the packages as built (packages/<name>/dist, `tsc -b`), the code the command runs,
 * loaded by Node.js itself: a test's import of `@gpusynth/<name>` or of `../src/<file>.js` is of
 * the built file. Served from the TypeScript sources, every worker's modules went through vite's
 * transform and module runner: seven workers each importing the packages took 5.2 s of CPU from the
 * sources and 3.8 s built (three runs of each in turns on 2 cores, 2026-12-07), and vitest's own
 * process about a second more; whole suites differ by less than this machine's spread. The build is
 * made current before the tests start (vitest.build.ts): a source edited since the last build is
 * built first, where before the command's tests ran whatever bundle was last built.
 */
const testsRunBuilt: Plugin = {
  name: "gpusynth-tests-run-built",
  enforce: "pre",
  resolveId(source, importer) {
    if (source.startsWith("@gpusynth/")) return `${root}/packages/${source.slice("@gpusynth/".length)}/dist/index.js`;
    if (importer === undefined || !source.startsWith(".")) return null;
    const file = SOURCE_FILE.exec(resolve(dirname(importer), source));
    return file === null ? null : `${root}/packages/${file[1]}/dist/${file[2]}.js`;
  },
};

export default defineConfig({
  plugins: [testsRunBuilt],
  test: {
    globalSetup: ["./vitest.build.ts"],
    // Loaded by Node.js, as the command loads them, not by vite's module runner: a module loaded by
    // both would be two modules (two classes of one name, which instanceof tells apart).
    server: { deps: { external: [BUILT_FILE] } },
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    // A file's beforeAll drives a whole scenario: on a loaded 2-core machine it may take longer
    // than vitest's default 10 s, as long as a test.
    hookTimeout: 60_000,
    // Many files wait on child processes and wall-clock pacing (the live runs, the collectors and
    // Prometheus they feed): about four at a time, whatever the core count, and the longest of
    // them start together. Five workers more than cores leave a worker or more per core computing
    // while they wait. Measured on 2 cores (2026-12-07, `just test-cost`: each file's CPU and its
    // children's): with two more than cores, the first 35 s kept one core busy (the four longest
    // files, all waiting, having started together); with four more, the first 35 s kept 1.8 cores
    // busy. Whole suites in turns: four more than cores 94.6 s (median of three; 185 s of CPU), two
    // more 105.1 s (179 s); later, six pairs of five more against four: faster by 3.2 to 3.8 s in
    // four, slower by 0.4 and 1.3 s in two (mean 2 s), the same CPU (185 to 196 s each). Eight
    // workers on 2 cores took 93 s once and 13 s more CPU than six: each worker imports and warms up
    // the sources anew.
    maxWorkers: availableParallelism() + 5,
    // A worker's files share its module cache instead of importing the SDK and the sources anew
    // for each file (a third of the suite's CPU time). The sources keep no global state: no
    // OpenTelemetry global provider, every run built from its own ClusterRun.
    isolate: false,
    // The suite allocates fast (frames, OTLP requests, event logs): a young generation of 64 MiB
    // instead of V8's 16 MiB lets most of it die unscavenged; it cut the suite's CPU time by a
    // tenth (garbage collection was a quarter of it in a profile of every worker).
    //
    // And one thread per worker collects its garbage: six workers on two cores leave V8's parallel
    // and concurrent collector threads no idle core, only their coordination to pay for. Measured on
    // 2 cores in turns, two full suites of each (2026-12-07): 265 and 266 s of CPU with the helpers,
    // 251 and 254 s without; later runs of this machine drifted by a tenth between runs, so the
    // gain is a few per cent at most (bench/results/live-platform.md measured more on the live run).
    //
    // And the old generation starts at 512 MiB: V8 starts it small and marks the whole heap each
    // time it grows past its limit, which a file's runs (a month of events, a platform scrape)
    // cross many times over while their heap is mostly garbage. Measured on 2 cores in turns
    // (2026-12-07): six CPU-bound files on two workers, 37.0 to 38.4 s of CPU against 39.2 to 40.6
    // (four runs of each); whole suites 215.8 and 213.5 s of CPU (110.3 and 109.2 s wall) against
    // 217.2 and 225.0 (112.6 and 114.9 s). 1,024 MiB did no better than 512.
    execArgv: ["--max-semi-space-size=64", "--single-threaded-gc", "--initial-old-space-size=512"],
    // Tests run in a random order within each file (`just test` prints the seed); files start
    // longest first (vitest's cache of the last run's durations, else vitest.durations.json: a
    // fresh clone has no cache), so no long file starts last.
    sequence: { shuffle: { files: false, tests: true }, sequencer: LongestFirst },
    // `just test-cost`: each file's CPU, its children's and its wall time, into the file named.
    setupFiles: process.env.GPUSYNTH_TEST_COST === undefined ? [] : ["./vitest.file-cost.ts"],
  },
});
