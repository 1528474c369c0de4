// Live-run benchmark: the issue's own measure of emission cost, taken from outside the process.
// `gpusynth run blueprints/platform.yaml` pushes OTLP/gRPC (metrics and logs, the live defaults) at
// a 15 s interval to a gRPC receiver in this process that accepts every request without decoding
// it; after the warm-up, the child's CPU time (/proc/<pid>/stat) over eight intervals gives its
// share of one core, and its RSS is read at the end.
// Run: `npx just bench` (builds first). Writes bench/results/live-platform.{json,md}.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { Server, ServerCredentials } from "@grpc/grpc-js";

const INTERVAL_S = 15;
const MEASURED_INTERVALS = 8;
const root = new URL("..", import.meta.url).pathname;
/** The unit of /proc's CPU times (USER_HZ). */
const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** A receiver for both OTLP services that answers every Export with an empty response. */
async function startSink() {
  const received = { requests: 0, bytes: 0 };
  const raw = (path) => ({
    Export: {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (b) => b,
      requestDeserialize: (b) => {
        received.requests++;
        received.bytes += b.length;
        return b;
      },
      responseSerialize: () => Buffer.alloc(0),
      responseDeserialize: (b) => b,
    },
  });
  const server = new Server();
  const answer = (_call, callback) => callback(null, Buffer.alloc(0));
  server.addService(raw("/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"), { Export: answer });
  server.addService(raw("/opentelemetry.proto.collector.logs.v1.LogsService/Export"), { Export: answer });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
  );
  return { port, received, stop: () => server.forceShutdown() };
}

/** utime + stime of a process in seconds, and its resident set in MiB. */
function usage(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return { cpuSeconds, rssMiB: Number(rss?.[1] ?? 0) / 1024 };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const sink = await startSink();
// LIVE_PLATFORM_PROFILE=<dir>: the run writes a CPU profile there (node --cpu-prof) when it stops.
const profile = process.env.LIVE_PLATFORM_PROFILE;
const child = spawn(
  process.execPath,
  [
    ...(profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profile}`]),
    `${root}packages/cli/bin/gpusynth.js`,
    "run",
    "--interval",
    `${INTERVAL_S}s`,
    "--listen",
    "none",
    `${root}blueprints/platform.yaml`,
  ],
  { env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}` }, stdio: ["ignore", "ignore", "pipe"] },
);
let stderr = "";
child.stderr.on("data", (chunk) => {
  stderr += chunk;
});
// The warm-up ends with the first status line (" | <n> running, ..."); measuring starts a few
// seconds into the first interval, so the first scrape's encoding is inside the window.
const warmStart = performance.now();
while (!/\| \d+ running/.test(stderr)) {
  if (child.exitCode !== null) throw new Error(`gpusynth exited:\n${stderr}`);
  await sleep(100);
}
const warmupSeconds = (performance.now() - warmStart) / 1000;
await sleep(2_000);
const before = usage(child.pid);
const receivedBefore = { ...sink.received };
const t0 = performance.now();
await sleep(MEASURED_INTERVALS * INTERVAL_S * 1000);
const after = usage(child.pid);
const wallSeconds = (performance.now() - t0) / 1000;
const requests = sink.received.requests - receivedBefore.requests;
const mib = (sink.received.bytes - receivedBefore.bytes) / 2 ** 20;
child.kill("SIGINT");
await new Promise((resolve) => child.once("exit", resolve));
sink.stop();

const share = ((after.cpuSeconds - before.cpuSeconds) / wallSeconds) * 100;
const result = {
  date: new Date().toISOString().slice(0, 10),
  machine: `${cpus()[0]?.model ?? "unknown"} (${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB)`,
  node: process.version,
  intervalSeconds: INTERVAL_S,
  measuredSeconds: +wallSeconds.toFixed(1),
  warmupSeconds: +warmupSeconds.toFixed(1),
  cpuSeconds: +(after.cpuSeconds - before.cpuSeconds).toFixed(2),
  coreShare: +share.toFixed(1),
  rssMiB: Math.round(after.rssMiB),
  requests,
  receivedMiB: +mib.toFixed(1),
};
writeFileSync(new URL("results/live-platform.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(
  new URL("results/live-platform.md", import.meta.url),
  `# A live platform run, measured from outside

Measured ${result.date} on ${result.machine}, Node.js ${result.node}.

\`gpusynth run --interval ${INTERVAL_S}s --listen none blueprints/platform.yaml\` (4,096 GPUs) pushing OTLP/gRPC —
metrics and the log records (Kubernetes events, the scheduler's log), the live defaults — to a gRPC
receiver that accepts every request undecoded. After its warm-up (${result.warmupSeconds} s: a simulated day), the
process's CPU time from /proc over ${result.measuredSeconds} s (${MEASURED_INTERVALS} intervals):

| measure | value | goal |
|---|---|---|
| CPU | ${result.cpuSeconds} s | |
| share of one core | ${result.coreShare} % | under 5 % |
| RSS at the end | ${result.rssMiB} MiB | under 512 MiB |
| requests received | ${result.requests} (${result.receivedMiB} MiB) | |

${result.coreShare <= 5 ? "Within the goal." : `Above the goal: see below, and bench/results/emit-speed.md for the metrics alone.`}

Where the time goes (\`LIVE_PLATFORM_PROFILE=<dir> node bench/live-platform.mjs\`: a CPU profile of the
run's main thread, 2026-12-05, the samples after the warm-up): garbage collection 24 %, gpusynth's
OTLP metrics encoding and the copy of each request into its slab 20 %, Node's buffers and streams
under the transports 16 % (the SDK's gRPC transport copies every request once more, \`Buffer.from\`),
the SDK's log serializers 7 %, GPU physics 6 %, the SDK's metric reader and gpusynth's producer 5 %,
gRPC 5 %, the sources' samples 8 %. The main thread is about half the process's CPU: the rest is V8's
garbage collector marking and sweeping on its helper threads.

The request bodies: a scrape's requests (about 70 MiB an interval) wait in the delivery queue for
seconds, long enough to be promoted, and a body allocated per request made V8 collect its whole heap
several times an interval. They are now copied into slabs of memory reused once their requests are
done (packages/emit/src/delivery/request-slabs.ts): 13.9 % of a core before, measured the same day
on this machine, against the figure above.

What remains is mostly the heap itself. A heap snapshot during a scrape holds 206 MiB in 2.9 million
objects: the series' label sets with their kept OTLP encodings (64 MiB of strings), and the scrape's
442,000 samples, each an object and often a boxed double, 230,000 of them made anew each scrape
(dcgm-exporter's, the kubelet's changing families, Run:ai's). Every full collection marks
all of it, about twice an interval now. Tried on this run and measured, without a gain beyond the
runs' spread (about ±1 point): a young generation of 64 MiB (\`--max-semi-space-size=64\`, 11.4 %),
DataPoints kept per label set and updated in place (12.2 %), and the changing samples of
dcgm-exporter, the kubelet and Run:ai kept per label set and updated in place (12.1 %): looked up
through a WeakMap per series, keeping an object costs as much as making it. What would pay is
series stored outside V8's heap altogether — values in typed arrays, label sets as kept bytes —
so that a full collection has little to mark.

The warm-up costs more with logs on than without (about 5 s of CPU instead of 1.5 s): the
Kubernetes events of the simulated day go through client-go's event cache so that later events
aggregate and count as they would.

Reproduce: \`node bench/live-platform.mjs\` (part of \`npx just bench\`).
`,
);
console.log(result);
