// CLI start-up benchmark: what a `gpusynth` process costs before and around its work, started as
// a user starts it (bin/gpusynth.js: the bundle, packages/cli/bundle from scripts/bundle-cli.mjs,
// its chunks compiled with V8's code cache by bin/code-cache.js), the same bundle without the
// cache (GPUSYNTH_CODE_CACHE=off), and from the TypeScript build's modules (packages/cli/dist), in
// turns, so a drift in the machine's speed falls on all. CPU is the operating system's account of
// each finished child (user + system, /proc/self/stat's children fields, in 10 ms ticks); the
// figure is each command's median.
// Run: `npx just bench` (builds first). Writes bench/results/cli-startup.{json,md}.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = 11;
const COMMANDS = [
  ["--help"],
  ["run", "--help"],
  ["validate", "blueprints/lab.yaml"],
  ["run", "--offline", "--duration", "10m", "--interval", "1m", "--json", "blueprints/lab.yaml"],
  // A live run as the tests start dozens: the warm-up, then two intervals served.
  ["run", "--speed", "60", "--interval", "1s", "--duration", "2s", "--listen", "127.0.0.1:0", "--json", "blueprints/lab.yaml"],
];
const bin = ["packages/cli/bin/gpusynth.js"];
const fromDist = [
  "--input-type=module",
  "-e",
  `import { main } from ${JSON.stringify(`${root}packages/cli/dist/main.js`)}; process.exitCode = await main(process.argv.slice(1));`,
];
/** How each layout starts: node's arguments before the command's, and its environment. */
const LAYOUTS = {
  cached: { argv: bin, env: {} },
  bundle: { argv: bin, env: { GPUSYNTH_CODE_CACHE: "off" } },
  dist: { argv: fromDist, env: {} },
};

/** CPU seconds of this process's reaped children so far (utime + stime of /proc/self/stat). */
function childrenCpu() {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** One process running `args` in `layout`: CPU and wall seconds. */
function once(layout, args) {
  const { argv, env } = LAYOUTS[layout];
  const cpuBefore = childrenCpu();
  const started = performance.now();
  const child = spawnSync(process.execPath, [...argv, ...args], { cwd: root, stdio: "ignore", env: { ...process.env, ...env } });
  if (child.status !== 0) throw new Error(`${layout} ${args.join(" ")} exited with ${child.status}`);
  return { cpu: childrenCpu() - cpuBefore, wall: (performance.now() - started) / 1000 };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const names = Object.keys(LAYOUTS);
const rows = [];
for (const args of COMMANDS) {
  const seen = Object.fromEntries(names.map((name) => [name, []]));
  for (const name of names) once(name, args); // the page cache warmed for all
  for (let round = 0; round < ROUNDS; round++)
    for (const name of round % 2 === 0 ? names : [...names].reverse()) seen[name].push(once(name, args));
  const figures = (name) => ({
    cpuS: Math.round(median(seen[name].map((r) => r.cpu)) * 100) / 100,
    wallS: Math.round(median(seen[name].map((r) => r.wall)) * 100) / 100,
  });
  rows.push({ command: `gpusynth ${args.join(" ")}`, ...Object.fromEntries(names.map((name) => [name, figures(name)])) });
}

const result = {
  date: new Date().toISOString(),
  machine: { cpu: cpus()[0]?.model ?? "unknown", cores: cpus().length, node: process.version },
  rounds: ROUNDS,
  commands: rows,
};
writeFileSync(new URL("results/cli-startup.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
const table = rows
  .map(
    ({ command, cached, bundle, dist }) =>
      `| \`${command}\` | ${cached.cpuS} | ${bundle.cpuS} | ${dist.cpuS} | ${cached.wallS} | ${bundle.wallS} | ${dist.wallS} |`,
  )
  .join("\n");
writeFileSync(
  new URL("results/cli-startup.md", import.meta.url),
  `# CLI start-up

${result.date} · ${result.machine.cpu} (${result.machine.cores} cores) · Node ${result.machine.node}

Each command ${ROUNDS} times from each layout, in turns; medians, seconds. CPU is user + system of the
whole process as the operating system counts it (10 ms ticks). "cached" is the command as it runs
(bin/gpusynth.js: the bundle with V8's code cache), "bundle" the same without the cache
(\`GPUSYNTH_CODE_CACHE=off\`), "dist" the TypeScript build's modules.

| command | CPU, cached | CPU, bundle | CPU, dist | wall, cached | wall, bundle | wall, dist |
|---|---|---|---|---|---|---|
${table}

Where the time goes: Node.js 20 has no compile cache, so a process started from dist/ first finds,
reads and compiles some 560 modules (about 100 of them zod's, 85 yaml's and 340 of the
OpenTelemetry SDK's packages): a profile of \`gpusynth run --help\` from dist/ is module compilation
(ESM and CommonJS), file opens, reads and stats, and package.json lookups, with garbage collection
of what loading leaves. The bundle (scripts/bundle-cli.mjs, rolldown) is the same code in a few
files: no resolution, a read each, and V8 compiles the functions that run. A profile of the live
run above from the bundle put a fifth of its busy time in compiling the bundle's modules (V8's
parse of its few megabytes), and more in compiling each function the first time it ran. So the
bundle is CommonJS, and bin/code-cache.js compiles each chunk with the code V8 compiled for it in
a priming run at build time (a live run of lab.yaml pushing OTLP: scripts/bundle-cli.mjs), kept
beside it: V8 then neither parses the chunk nor compiles the functions it holds. A cache V8
refuses (another Node.js, other V8 flags) is ignored. What is left is Node.js itself (about 0.05 s
for \`node -e 0\`), the functions the priming run never ran, and the command's own work. Only
\`gpusynth --help\` starts faster from dist/: the bundle's entry requires the chunk that holds the
blueprint's code (with zod and yaml, half a megabyte) before it reads its arguments, where dist/'s
modules load what the help needs. The test suite starts the command about sixty times.

Reproduce: \`npx just bench\` (or \`npm run bench\`).
`,
);
console.log(table);
