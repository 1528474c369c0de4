// CLI start-up benchmark: what a `gpusynth` process costs before and around its work, started
// from the bundle (packages/cli/bundle, scripts/bundle-cli.mjs: what bin/gpusynth.js runs) and
// from the TypeScript build's modules (packages/cli/dist), in turns, so a drift in the machine's
// speed falls on both. CPU is the operating system's account of each finished child (user +
// system, /proc/self/stat's children fields, in 10 ms ticks); the figure is each command's median.
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
];
const LAYOUTS = { bundle: "packages/cli/bundle/main.js", dist: "packages/cli/dist/main.js" };

/** CPU seconds of this process's reaped children so far (utime + stime of /proc/self/stat). */
function childrenCpu() {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** One process running `args` from `entry`'s main, as the bin does: CPU and wall seconds. */
function once(entry, args) {
  const script = `import { main } from ${JSON.stringify(`${root}${entry}`)}; process.exitCode = await main(process.argv.slice(1));`;
  const cpuBefore = childrenCpu();
  const started = performance.now();
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script, ...args], { cwd: root, stdio: "ignore" });
  if (child.status !== 0) throw new Error(`${entry} ${args.join(" ")} exited with ${child.status}`);
  return { cpu: childrenCpu() - cpuBefore, wall: (performance.now() - started) / 1000 };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rows = [];
for (const args of COMMANDS) {
  const seen = { bundle: [], dist: [] };
  once(LAYOUTS.bundle, args); // the page cache warmed for both
  once(LAYOUTS.dist, args);
  for (let round = 0; round < ROUNDS; round++)
    for (const layout of round % 2 === 0 ? ["bundle", "dist"] : ["dist", "bundle"]) seen[layout].push(once(LAYOUTS[layout], args));
  const figures = (layout) => ({
    cpuS: Math.round(median(seen[layout].map((r) => r.cpu)) * 100) / 100,
    wallS: Math.round(median(seen[layout].map((r) => r.wall)) * 100) / 100,
  });
  rows.push({ command: `gpusynth ${args.join(" ")}`, bundle: figures("bundle"), dist: figures("dist") });
}

const result = {
  date: new Date().toISOString(),
  machine: { cpu: cpus()[0]?.model ?? "unknown", cores: cpus().length, node: process.version },
  rounds: ROUNDS,
  commands: rows,
};
writeFileSync(new URL("results/cli-startup.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
const table = rows
  .map(({ command, bundle, dist }) => `| \`${command}\` | ${bundle.cpuS} | ${dist.cpuS} | ${bundle.wallS} | ${dist.wallS} |`)
  .join("\n");
writeFileSync(
  new URL("results/cli-startup.md", import.meta.url),
  `# CLI start-up

${result.date} · ${result.machine.cpu} (${result.machine.cores} cores) · Node ${result.machine.node}

Each command ${ROUNDS} times from each layout, in turns; medians, seconds. CPU is user + system of the
whole process as the operating system counts it (10 ms ticks).

| command | CPU, bundle | CPU, dist | wall, bundle | wall, dist |
|---|---|---|---|---|
${table}

Where the time goes: Node.js 20 has no compile cache, so a process started from dist/ first finds,
reads and compiles some 560 modules (about 100 of them zod's, 85 yaml's and 340 of the
OpenTelemetry SDK's packages): a profile of \`gpusynth run --help\` from dist/ is module compilation
(ESM and CommonJS), file opens, reads and stats, and package.json lookups, with garbage collection
of what loading leaves. The bundle (scripts/bundle-cli.mjs, rolldown) is the same code in a few
files: no resolution, a read each, and V8 compiles the functions that run. What is left is Node.js
itself (about 0.05 s for \`node -e 0\`), compiling what each command runs, and the command's own work.
The test suite starts the command about fifty times.

Reproduce: \`npx just bench\` (or \`npm run bench\`).
`,
);
console.log(table);
