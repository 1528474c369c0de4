// Live-run benchmark: the issue's own measure of emission cost, taken from outside the process.
// `gpusynth run blueprints/platform.yaml` pushes OTLP (metrics and logs over http/protobuf, the live
// defaults) at a 15 s interval to an HTTP receiver in this process that accepts every request
// without decoding it; after the warm-up, the child's CPU time (/proc/<pid>/stat) over eight
// intervals gives its share of one core, and its RSS is read at the end, with the most it reached
// (the warm-up and the first scrapes included). The same run is then measured pushing OTLP/gRPC to
// a gRPC receiver: the transport is much of the cost.
// Run: `npx just bench` (builds first). Writes bench/results/live-platform.{json,md}.
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, totalmem } from "node:os";
import { Server, ServerCredentials } from "@grpc/grpc-js";

const INTERVAL_S = 15;
const MEASURED_INTERVALS = 8;
/** The intervals after the warm-up measured apart, before those: the scrape path's start. */
const START_INTERVALS = 2;
const root = new URL("..", import.meta.url).pathname;
/** The unit of /proc's CPU times (USER_HZ). */
const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** A receiver that takes every request of either signal, undecoded: gRPC's, or OTLP/HTTP's. */
function startSink(protocol) {
  return protocol === "grpc" ? startGrpcSink() : startHttpSink();
}

/** A receiver for both OTLP services that answers every Export with an empty response. */
async function startGrpcSink() {
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

/** An OTLP/HTTP receiver for both signals' paths that answers every POST with an empty protobuf response. */
async function startHttpSink() {
  const received = { requests: 0, bytes: 0 };
  const server = createServer((request, response) => {
    let bytes = 0;
    request.on("data", (chunk) => {
      bytes += chunk.length;
    });
    request.on("end", () => {
      received.requests++;
      received.bytes += bytes;
      response.writeHead(200, { "content-type": "application/x-protobuf" });
      response.end();
    });
  });
  const port = await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
  return { port, received, stop: () => server.close() };
}

/** utime + stime of a process in seconds, and its resident set in MiB, now and at most so far. */
function usage(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { cpuSeconds, rssMiB: kib("VmRSS") / 1024, peakRssMiB: kib("VmHWM") / 1024 };
}

/**
 * CPU seconds of a process's main thread and of its other threads, from /proc/<pid>/task. Node.js
 * 20 names none of its threads, but here the others are V8's helpers (parallel scavenges,
 * concurrent marking and sweeping, and background compilation, which is little once the run is
 * warm): libuv's pool has nothing to do for a run that writes no files.
 */
function threadUsage(pid) {
  const usage = { main: 0, others: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
      const seconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
      if (tid === String(pid)) usage.main += seconds;
      else usage.others += seconds;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return usage;
}

/**
 * What V8's traces say of the window, from their lines, each stamped with when it arrived (ms
 * since the spawn): `--trace-gc-nvp` gives every collection's pause on the main thread and a full
 * collection's incremental marking steps there; `--trace-opt` a line for every function the
 * optimizing compiler compiled.
 */
function v8Work(lines, fromMs, toMs) {
  const work = { gcMainMs: 0, collections: 0, fullCollections: 0, compilations: 0 };
  for (const { atMs, text } of lines) {
    if (atMs < fromMs || atMs > toMs) continue;
    if (text.includes("[completed compiling ")) work.compilations++;
    if (!text.includes(" gc=")) continue;
    work.collections++;
    if (/ gc=m?mc /.test(text)) work.fullCollections++;
    for (const [, key, value] of text.matchAll(/ (pause|incremental)=([\d.]+)/g)) if (key !== undefined) work.gcMainMs += Number(value);
  }
  return work;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const number = (text) => Number(text.replaceAll(",", ""));

/** One live run pushing over `protocol` (http/protobuf, the default, or grpc), measured after its warm-up. */
async function measure(protocol) {
  // The default protocol with none set, as a user's first run has it.
  const { OTEL_EXPORTER_OTLP_PROTOCOL: _unset, ...env } = process.env;
  const sink = await startSink(protocol);
  // LIVE_PLATFORM_PROFILE=<dir>: the run writes a CPU profile there (node --cpu-prof) when it stops.
  const profile = process.env.LIVE_PLATFORM_PROFILE;
  const spawnedAt = performance.now();
  const child = spawn(
    process.execPath,
    [
      // Each collection and each optimized compilation a line on stdout (the run writes nothing
      // else there without --json).
      "--trace-gc-nvp",
      "--trace-opt",
      ...(profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profile}`]),
      `${root}packages/cli/bin/gpusynth.js`,
      "run",
      "--interval",
      `${INTERVAL_S}s`,
      "--listen",
      "none",
      `${root}blueprints/platform.yaml`,
    ],
    {
      env: {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`,
        ...(protocol === "grpc" ? { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } : {}),
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  /** V8's trace lines, with when each arrived (ms since the spawn). */
  const v8Lines = [];
  let partial = "";
  child.stdout.on("data", (chunk) => {
    const atMs = performance.now() - spawnedAt;
    const text = partial + chunk;
    const complete = text.split("\n");
    partial = complete.pop() ?? "";
    for (const line of complete) v8Lines.push({ atMs, text: line });
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  // The warm-up ends with the first status line (" | <n> running, ..."), and the first scrape
  // follows: the first intervals after it are the scrape path's start (V8 compiles its code as it
  // turns hot), measured apart from the intervals after them, what a run costs as it goes on.
  const warmStart = performance.now();
  while (!/\| \d+ running/.test(stderr)) {
    if (child.exitCode !== null) throw new Error(`gpusynth exited:\n${stderr}`);
    await sleep(100);
  }
  const warmupSeconds = (performance.now() - warmStart) / 1000;
  await sleep(2_000);
  const snapshot = () => ({
    atMs: performance.now() - spawnedAt,
    ...usage(child.pid),
    threads: threadUsage(child.pid),
    received: { ...sink.received },
  });
  const started = snapshot();
  await sleep(START_INTERVALS * INTERVAL_S * 1000);
  const settled = snapshot();
  await sleep(MEASURED_INTERVALS * INTERVAL_S * 1000);
  const ended = snapshot();
  child.kill("SIGINT");
  await new Promise((resolve) => child.once("exit", resolve));
  sink.stop();

  /** The process's CPU between two snapshots, by thread, with what V8's traces say of it. */
  const between = (from, to) => {
    const seconds = (to.atMs - from.atMs) / 1000;
    const cpu = to.cpuSeconds - from.cpuSeconds;
    const v8 = v8Work(v8Lines, from.atMs, to.atMs);
    const gcMain = v8.gcMainMs / 1000;
    const helpers = to.threads.others - from.threads.others;
    return {
      measuredSeconds: +seconds.toFixed(1),
      cpuSeconds: +cpu.toFixed(2),
      coreShare: +((cpu / seconds) * 100).toFixed(1),
      mainThreadSeconds: +(to.threads.main - from.threads.main).toFixed(2),
      // V8's helpers' CPU: parallel scavenges, concurrent marking and sweeping, and the optimizing
      // compiler. The traces' own durations of that work are wall times, which on two busy cores
      // include waiting for one, so they cannot split it.
      otherThreadSeconds: +helpers.toFixed(2),
      gcMainSeconds: +gcMain.toFixed(2),
      collections: v8.collections,
      fullCollections: v8.fullCollections,
      compilations: v8.compilations,
      // Garbage collection's share lies between the main thread's collections alone and those with
      // all of the helpers' CPU.
      gcShareAtLeast: +((gcMain / cpu) * 100).toFixed(1),
      gcShareAtMost: +(((gcMain + helpers) / cpu) * 100).toFixed(1),
      requests: to.received.requests - from.received.requests,
      receivedMiB: +((to.received.bytes - from.received.bytes) / 2 ** 20).toFixed(1),
    };
  };

  // The run's closing report: a run that drops part of its data (a full queue) costs less CPU for it,
  // so a figure counts only with what was delivered beside it.
  const report = /OTLP metrics: ([\d,]+) of ([\d,]+) points delivered in [\d,]+ requests; (.*)/.exec(stderr);
  if (report === null) throw new Error(`gpusynth printed no delivery report:\n${stderr}`);
  if (!stderr.includes(`pushing OTLP (${protocol})`)) throw new Error(`gpusynth did not push over ${protocol}:\n${stderr}`);
  return {
    warmupSeconds: +warmupSeconds.toFixed(1),
    ...between(settled, ended),
    start: between(started, settled),
    rssMiB: Math.round(ended.rssMiB),
    peakRssMiB: Math.round(ended.peakRssMiB),
    pointsDelivered: number(report[1]),
    pointsProduced: number(report[2]),
    lost: report[3],
  };
}

const result = {
  date: new Date().toISOString().slice(0, 10),
  machine: `${cpus()[0]?.model ?? "unknown"} (${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB)`,
  node: process.version,
  intervalSeconds: INTERVAL_S,
  ...(await measure("http/protobuf")),
};
/** The same run over OTLP/gRPC, one after the other on the same machine. */
const grpc = await measure("grpc");
result.grpc = grpc;
writeFileSync(new URL("results/live-platform.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(
  new URL("results/live-platform.md", import.meta.url),
  `# A live platform run, measured from outside

Measured ${result.date} on ${result.machine}, Node.js ${result.node}.

\`gpusynth run --interval ${INTERVAL_S}s --listen none blueprints/platform.yaml\` (4,096 GPUs) pushing OTLP —
metrics and the log records (Kubernetes events, the scheduler's log) over http/protobuf, the live
defaults — to an HTTP receiver that accepts every request undecoded. After its warm-up (${result.warmupSeconds} s: a simulated day)
and its first ${START_INTERVALS} intervals (the scrape path's start, measured apart), the process's CPU time from /proc over
${result.measuredSeconds} s (${MEASURED_INTERVALS} intervals):

| measure | value | goal |
|---|---|---|
| CPU | ${result.cpuSeconds} s (main thread ${result.mainThreadSeconds} s, V8's helper threads ${result.otherThreadSeconds} s) | |
| share of one core | ${result.coreShare} % | at most 3 % (issue 29) |
| garbage collection, share of that CPU | ${result.gcShareAtLeast} to ${result.gcShareAtMost} % (the main thread's pauses and marking steps, ${result.gcMainSeconds} s in ${result.collections} collections, ${result.fullCollections} of them full; at most all of the helpers' CPU as well) | under 5 % (issue 29) |
| functions the optimizing compiler compiled (on a helper thread) | ${result.compilations} | |
| the first ${START_INTERVALS} intervals after the warm-up: share of one core; compiled functions | ${result.start.coreShare} %; ${result.start.compilations} | |
| RSS at the end | ${result.rssMiB} MiB | under 256 MiB (issue 29) |
| RSS at most (warm-up and first scrape included) | ${result.peakRssMiB} MiB | |
| requests received | ${result.requests} (${result.receivedMiB} MiB) | |
| points delivered, of those made (the whole run) | ${result.pointsDelivered.toLocaleString("en-US")} of ${result.pointsProduced.toLocaleString("en-US")} (${result.lost}) | all |
| the same run over OTLP/gRPC (\`OTEL_EXPORTER_OTLP_PROTOCOL=grpc\`): share of one core | ${grpc.coreShare} % (${grpc.cpuSeconds} s; the first ${START_INTERVALS} intervals ${grpc.start.coreShare} %) | |
| over OTLP/gRPC: garbage collection, share of its CPU | ${grpc.gcShareAtLeast} to ${grpc.gcShareAtMost} % (main thread ${grpc.gcMainSeconds} s of ${grpc.mainThreadSeconds} s, ${grpc.fullCollections} full collections; the helpers ${grpc.otherThreadSeconds} s) | |
| over OTLP/gRPC: RSS at the end, at most | ${grpc.rssMiB} MiB, ${grpc.peakRssMiB} MiB | |
| over OTLP/gRPC: requests received; points delivered, of those made | ${grpc.requests} (${grpc.receivedMiB} MiB); ${grpc.pointsDelivered.toLocaleString("en-US")} of ${grpc.pointsProduced.toLocaleString("en-US")} (${grpc.lost}) | all |

Until 2026-12-06 the default protocol was gRPC, and this table's first rows were gRPC's (14 % of a
core on 2026-12-06, 6.9 % over OTLP/HTTP the same day). The default is now the specification's,
\`http/protobuf\` ("If no configuration is provided the default transport SHOULD be
\`http/protobuf\`": opentelemetry-specification at a74d4da, specification/protocol/exporter.md), as in
the OpenTelemetry JS SDK; a run whose endpoint is on port 4317 with no protocol set warns that
this is OTLP/gRPC's port.

${result.coreShare <= 3 ? "Within the goal." : `Above the goal: see below, and bench/results/emit-speed.md for the metrics alone.`}

On this machine an interval costs the run more than the same work run back to back
(bench/results/burst-after-idle.md, \`bench/burst-after-idle.mjs\`): after the process slept through
the interval before, the first pass over its memory, the frame, takes three to five times its CPU
time (a platform frame 232 and 436 ms against 84 and 94 ms back to back, the whole interval 408 and
633 ms against 288 and 292: medians of four in one process, two runs, 2026-12-08), and a pass over
150 MB of heap objects with no gpusynth code in it does the same (412 and 469 ms against 126 and
123). The machine is a Firecracker virtual machine (\`nested_pvm=1\` on its kernel's command line);
after a virtual core halts, memory costs several times as much to reach until it is touched again.
A live run's share of a core measured here counts every interval at that cost: 408 to 633 ms every
15 s is 2.7 to 4.2 % of a core, 290 ms would be 1.9 %. What the run can change is how much memory
an interval touches.

Since 2026-12-08 a run holds less of what it keeps from one scrape to the next: a family's
MetricDescriptor is one for every target that lists it (target-provider.ts \`descriptorOf\`; one
per target and family, each had its encoded header kept in a buffer of its own: 25,000 on
platform.yaml), a family slot's lists are made to size rather than grown by writes (FamilySlot,
about four times the places used), and a kept pod state's series too (SeriesColumns.fit); a GPU's
integrals of a run are kept on the run rather than in two WeakMaps per GPU. In one process, after a
simulated day and twelve scrapes of platform.yaml, the heap after a full collection went from 162.8
to 144.0 MiB. This run, two runs of each in turns against the commit before (60 s from 30 s after
the warm-up, /proc): RSS at the end 289 and 300 MiB against 335 and 335, the most it reached 360
and 376 against 362 and 372 (the warm-up and first scrape), the share of a core 4.48 and 4.62 %
against 5.88 and 4.05 %.

Until 2026-12-05 the warm-up kept its simulated day's Kubernetes events and scheduler cycles until
it ended, only to drop them: this run's resident set peaked at 1,285 MiB at its first scrape, and
deploy/'s pod for the shard with the logs (\`run --shard 0/4 --workers 1\`) at 1,120 MiB, above the
1 GiB memory limit deploy/ gives it. The warm-up now drops them as it goes (ClusterRun.skipLogs, now skipPast
after each slice; the records after it are the same, cluster-run.test.ts): this run peaks at 669
and 689 MiB in two runs, the shard at 609 MiB, measured on the same machine the same day. A frame
is no longer held by the run's loop while it waits for the next interval either
(constructs/src/run-driver.ts, handOn), so a scrape's 450,000 samples die young instead of being
marked by every full collection in between.

Until 2026-12-07 the warm-up also kept every container's time on every GPU of its simulated day
(the GPU model keeps a run until a reading has summed its energy, and nothing reads in a warm-up),
for the first scrape to sum at once. The warm-up now sums each GPU's energy slice by slice as it
goes, without reading it (ClusterRun.skipPast, GpuActivityModel.settle; cluster-run.test compares
every sample after such a stretch with a run that never skipped, the energy counters included).
Measured from outside (a live run of platform.yaml to a receiver that accepts everything, /proc,
2026-12-07, this machine, four runs of each in turns), the resident set at most went from 532–593
MiB to 382–406 MiB; at the end, 357–388 against 360–386. Over 60 or 90 s starting 32 s after the
warm-up, three of those runs took 5.2–5.6 % of a core against 4.1–5.0 % — the main thread 0.3–0.65
s more, V8's helpers less. With the young generation's size pinned
(\`--min-semi-space-size=16 --max-semi-space-size=16\`, one run of each): 4.68 against 4.43 %, the
same 22 scavenges. Most of the difference went with how large V8 let the young generation grow
after a larger or smaller peak, not with the code: in one process, a platform frame after such a
warm-up costs what it costs after one that kept its runs (frames 5 to 24 after the day: medians of
53.5 and 59.1 ms against 57.7 and 62.2 ms, two runs of each in turns), and the first frame 0.67 s
against 1.29 s, for 0.9 s more in the warm-up. The warm-up sums the GPUs once a simulated hour,
not after each of its slices of a few simulated seconds: settling after each took its CPU from
9.3–10.0 s to 15.5 s (to the first status line); hourly, 10.2–10.7 s.

Until 2026-12-05 this run lost half of its metrics, and its figure (10.5–11.7 % of a core) was
for the half it sent: a scrape of this cluster (about 100 MiB of OTLP) is encoded in about a second,
faster than the receiver takes it, and it is larger than the delivery queue's default bound
(\`GPUSYNTH_OTLP_QUEUE_BYTES\`, 64 MiB), so the oldest requests of every scrape were dropped
(\`2,047,705 of 4,180,912 points delivered\`) although the receiver took an interval's data in a
fraction of the interval. A live scrape's exports now wait for room in the queue, for at most half
the interval (packages/emit/src/delivery/otlp-delivery.ts, \`scrapeRoomMs\`): everything is
delivered, and the CPU above is that of sending all of it (measured the same day on this machine:
15.7 ms of CPU per MiB delivered, against 22.7 before, when half was dropped). This bench now reads
the run's closing report, so a run that loses data cannot pass for a cheap one.

Where the time goes over OTLP/HTTP, the default (\`LIVE_PLATFORM_PROFILE=<dir> node bench/live-platform.mjs\`:
CPU profiles of the runs' main thread, the samples after the warm-up, and \`--trace-gc\`; requests
gathered as below): it is spread out: encoding 26 %, the frame and the simulation about a fifth,
garbage collection 17 %, the SDK reader and the stale markers 14 %; the socket's writes 3 %.

Over OTLP/HTTP the main thread is only about half of the process. Measured per thread from
/proc/<pid>/task over 60 s after the warm-up (2026-12-06, four runs): the main thread took 1.9–2.2 s,
V8's four helper threads together 1.9–2.1 s (parallel scavenges, concurrent marking and sweeping),
so garbage collection is about half of the run's CPU. Started with \`--single-threaded-gc\` the
same run took 3.35–3.53 s instead of 4.08–4.26 (the helpers' work done on the main thread, without
their coordination); with \`--max-semi-space-size=64\` 3.05–3.67 s, but with a resident set of
about 770 MiB instead of 560. Neither can be set from inside the process (after start,
\`v8.setFlagsFromString("--single-threaded-gc")\` aborts in V8's concurrent marker, and a semi-space
size is ignored), and the CLI runs as \`node packages/cli/bin/gpusynth.js\`, so neither is used.
What the collections cost is what the run allocates and keeps. The encoders now allocate nothing
per point (a platform scrape's 18 MiB of closure contexts, docs/contributing.md); a sampling heap
profile of the run that counts collected objects put a third of what was left in the SDK reader's
DataPoints (about 48 MiB an interval, built by the MetricProducer in the SDK's shape), and most of
the rest in the frame's fresh samples and the GPU readings. Each series now keeps its DataPoint from
one scrape to the next (packages/emit/src/target-provider.ts): measured in turns, two runs of each
over 150 s after the warm-up (2026-12-06), the share of a core stayed within this machine's noise
(8.0 and 9.0 % before, 8.9 and 9.2 % after) and the resident set at the end went from 537–541 to
491–511 MiB. What was left was mostly the frame's: every target's samples were made before the first
target was collected, so a scrape's ~450,000 outlived several scavenges and were promoted, to be
marked by the next full collection. Since 2026-12-07 a series keeps its Sample from one collect to
the next as well (TargetSeries, packages/constructs/src/catalogue.ts), its value set in place, and
the MetricProducer keeps each family's list of points: a sampling heap profile of platform's frames
and scrapes that counts what survives a scavenge (the inspector's HeapProfiler.startSampling with the
objects full collections free, not those scavenges free) put 30 MiB a frame there before and 7 MiB
after (the GPU readings, each scrape's maps); the logs add about 7 MiB a frame (4.2 MiB of it their
lines' text, flattened as it is encoded). Measured in turns over 120 s after the warm-up (2026-12-07,
two runs of each, per thread from /proc): the share of a core stayed within this machine's noise
(7.5 and 8.6 % before, 8.0 and 7.9 % after; main thread 6.06–6.15 s before, 5.54–6.20 s after; the
other threads 2.80–4.24 s before, 3.38–3.91 s after), the resident set at the end went from 491–569 to
467–488 MiB; this bench measured 7.3 % over OTLP/HTTP and 19.8 % over gRPC with the Samples kept,
and 8.3 and 23.1 % on the commit before, run just after. The table is of the state after that (the
label sets shared, each Sample its own DataPoint: see below). What the helper threads do now is mostly full collections marking what the run holds
(about 200 MB after one: the kept points and samples, the label sets and their kept bytes, an
object each), which only fewer objects would cut (a target's values in typed arrays rather than an
object per series). Where the resident set goes (a sampling heap profile of live
objects by where they were made, from the start of a run of platform.yaml's metrics and logs in one
process, after a simulated day and eight scrapes, 2026-12-07): 208 MiB of heap in use, of which the
label sets' kept OTLP attribute bytes 36 MiB, the kept Samples about 35 MiB (each also its series'
DataPoint where the target adds no labels: catalogue.ts \`PointSample\`), the DataPoints of the
kubelet's series (which carry their target's metrics_path) and every family's lists of points 26 MiB,
the maps that keep label sets 15 MiB and the label sets themselves 10 MiB; and 54 MiB outside the
heap, the request slabs waiting for delivery. A separate DataPoint for every series took 48 MiB
(220 MiB of heap in all). That is with a subject's families
whose series carry the same labels sharing one label set (catalogue.ts \`KeptLabelSets\`,
\`SharedLabelSets\`: a platform scrape's 231,000 label sets were 157,000 different ones): before, 237
MiB of heap, 48 MiB of it kept bytes and 14 MiB label sets (the resident set of that process went
from 517 to 447 MiB). Under 256 MiB would take both fewer objects and fewer kept bytes. Before that, with the
points kept, over 60 s after the warm-up (2026-12-06, one run, \`--trace-gc\` and /proc/<pid>/task):
the main thread took 2.66 s, V8's four helper threads 3.78 s; 28 scavenges left the heap 5.7 MB larger each
on average (up to 13 MB: a scrape's samples, alive through it), and 3 full collections each marked a
heap of about 229 MB. By log source, over 60 s as above (main thread, then V8's helper threads, one run
each): no logs (\`--logs none\`) 1.95 s and 1.89 s; the scheduler's log alone 2.53 s and 2.21 s;
Kubernetes events alone 2.40 s and 3.18 s; both 2.36 s and 3.30 s. The events' records (each
with its involved object's resource: a ResourceLogs per object in every request) drive most of what
the logs add to the collections. Their LoggerProvider per resource (packages/emit/src/logs-pipeline.ts)
is not what costs: one provider per receiver, each record given the same resources (the same bytes),
measured 2.20 s and 2.95 s, 2.62 s and 2.99 s in two runs.

Over gRPC (the table's last rows) garbage collection is about a quarter of the main thread and
most of the rest of the process (V8's helper threads marking). It is driven by memory outside the heap: the SDK's gRPC transport copies every request
(\`Buffer.from\` in otlp-grpc-exporter-base's grpc-exporter-transport.js) and grpc-js copies it
again into its framed message (\`Buffer.allocUnsafe\` in grpc-js' compression-filter.js), about
twice the wire bytes an interval; V8 starts a full collection of its heap for every 64 MiB of such
memory allocated since the last one (its external-memory soft limit), three or so an interval,
each marking the whole heap (about 2.7 million objects, 145–190 MiB after a collection; three forced
full collections of it take 360–470 ms, measured with \`gc()\` after each interval, 2026-12-06). Measured
with the same pipeline in one process (encoding and the SDK's gRPC transport to a receiver in
another process, 12 scrapes of platform.yaml, \`--trace-incremental-marking\`): about 3 full
collections an interval; 31 of the run's 34 were started for external memory, the rest by the
heap's own growth during the warm-up. The SDK's HTTP transport hands a request to its socket as it
is (a Readable of the bytes, piped into the request: otlp-exporter-base 0.223.0,
transport/http-transport-utils.js \`compressAndSend\`), so over OTLP/HTTP (the default: the table's first rows) the
run makes no such memory and costs ${result.coreShare} % of a core instead of ${grpc.coreShare} %, the same data delivered.
gpusynth's own copies are gone: its encoder writes each request once, into the reused slab where
it waits for delivery (packages/emit/src/delivery/request-slabs.ts). What pays now, over gRPC, is
fewer live objects for each collection to mark (series kept as data rather than objects).

A scrape's targets now travel together: over protobuf, the small requests of a scrape are gathered
into requests of up to 4 MiB (packages/emit/src/delivery/otlp-delivery.ts, \`Gathered\`; an
ExportMetricsServiceRequest holds any number of ResourceMetrics, and protobuf's repeated fields
concatenate), about 340 requests in the 120 s instead of about 12,500, one per target. In profiles
of the run's main thread over the eight intervals (2026-12-06), the transports' per-request work
(grpc-js, http2, the HTTP agent and client, the queue) had been about a fifth of it; the main
thread's busy time went from 13.6 s to 10.0 s over gRPC and from 8.2 s to 5.8 s over HTTP. The
process, measured as above in two pairs the same day against the commit before (each pair run back
to back; the machine's speed drifts by more than 10 % between runs): over OTLP/HTTP 10.24 → 8.65 s
and 11.50 → 7.85 s of CPU, over gRPC 20.49 → 17.22 s and 19.13 → 19.15 s, where the full
collections the transport's copies start are most of what is left. (A session before had tried
gathering and measured about 5 % less CPU within this run's spread; that was before the request
slabs and the wait for room.)

The warm-up costs more with logs on than without (about 5 s of CPU instead of 1.5 s): the
Kubernetes events of the simulated day go through client-go's event cache so that later events
aggregate and count as they would.

How often the full collections come (2026-12-07, \`--trace-gc\` over 100 s of this run): about one
a scrape after the warm-up, each leaving 200–213 MB of heap, the old generation growing by 20–40 MB
over the scrape before it. What grows it was measured with the inspector's sampling heap profiler
counting the objects that live through scavenges (those full collections free, and those alive at
the end) over four scrapes: 76 MiB, of which the scheduler's and the events' log lines a third (their
text flattened as the encoder writes it, 17 MiB; the records and the lines themselves), each
target's per-scrape maps and lists 8 MiB, map growth 5.5 MiB and the GPU readings 5 MiB; no one
place. V8's memory reducer is not what starts them (\`--no-memory-reducer\`: 5 full collections in 90 s
against 4 to 6 with it), nor is a larger growing factor a lever (\`--heap-growing-percent=100\`: 3,
the same share of a core within this machine's noise, 50 MiB more resident).

A target's scrape keeps a slot per family from one scrape to the next since 2026-12-07 (its points'
two lists, its MetricData, the scrape that listed it last: packages/emit/src/target-provider.ts,
\`FamilySlot\`) where it made three maps at every scrape, their iterators and a list of their entries,
and kept the maps until the next scrape (and V8 drops an array's storage when it is emptied with
\`length = 0\`: lists are now written over). What the run allocates, over 60 s after the warm-up (the
inspector's sampling heap profiler, counting what scavenges free too): 302 MiB before, 242 after. Two
runs of each in turns over 90 s: 4.55 and 4.06 s of CPU before, 4.01 and 3.90 after; 69 and 101
scavenges before, 57 and 57 after. The OTLP of six seeded offline runs, stale markers included, is
byte for byte the same. Since 2026-12-07 a family's stale markers are written after its points in
the slot's own list, where they had been a list of both made anew: in a platform run, the pods that
ended left stale series in about 140 families a scrape, whose 90,000 points were copied and held
until the next scrape. What outlives a
scavenge (the inspector's sampling heap profiler, not counting what scavenges free, over 60 s after
the warm-up) went from 55 to 51 MiB, the ScrapeProducer's
collect from 5.7 MiB to too little to list; the share of a core moved within this machine's noise
(two runs of each in turns over 90 s: 3.99 and 4.94 % after, 4.02 and 4.79 % before), and the
same six runs' OTLP is byte for byte the same.

What a paced run's young generation is when a scrape begins (2026-12-07, \`v8.getHeapSpaceStatistics()\`
every 0.5 s): between scrapes the process is idle, and V8's memory reducer runs a full collection that
shrinks the young generation from 32 MiB (two semi-spaces of 16) to 1 or 2; the next scrape's burst
starts in it, and it grows back (twice its size each time) only as scavenges find most of it alive.
Measured with \`--trace-gc-nvp\` over 90 s after the warm-up, one run each: started with
\`--no-memory-reducer\` it stays at 32 MiB, 47 scavenges against 84, 3.89 s of CPU against 4.29, and 413
MiB resident against 372. With a growth factor of 16 (\`v8.setFlagsFromString("--semi-space-growth-factor=16")\`
at start, which V8 reads each time it grows the space), two runs of each in turns: 27 and 26
scavenges against 105 and 75, 4.71 and 3.96 s of CPU against 5.30 and 4.31, the same bytes promoted
(28.5 and 36.3 MiB against 27.9 and 34.7), and 397–407 MiB resident against 352–382. Neither is
used: each trades about a tenth of the CPU for 20 to 55 MiB more resident, and the reducer cannot be
turned off once the process runs. Nor did handing a frame's log records to their encoder before the
scrape rather than after it help (two runs of each in turns: 39.5 and 35.5 MiB promoted against 31.6
and 30.7, 4.44 and 5.33 s of CPU against 4.11 and 4.80): the records then meet the smallest young
generation of the burst. Nor did writing them only when a consumer reads them, after the scrape
(two runs of each in turns, later in the cluster's day: 45.1 and 36.5 MiB promoted against 32.2 and
29.9, 7.28 and 6.88 s of CPU against 6.86 and 5.94). What the scavenges promote is mostly what a frame keeps until the next
(the GPUs' last readings, each target's lists) and the log records, alive while they are encoded.

What the process holds outside its heap (2026-12-07, \`process.memoryUsage()\` every 5 s of the same
run in one process, after the warm-up): 136–197 MiB of external memory, 102–173 MiB of it array
buffers, mostly the requests queued for delivery. A live scrape's exports waited for room only at
the queue's bound (64 MiB), and encoding outruns the socket, so every scrape filled the queue to it.
They now wait while what the transport can have in flight is queued (four requests of up to 4 MiB:
packages/emit/src/delivery/otlp-delivery.ts, \`roomBytes\`; past the scrape's wait the bound is still the
buffer for a receiver that is down or slow). In two runs of each, array buffers went from 116–146 to
79–94 MiB and the resident set from 459–490 to 439–459 MiB, while V8 kept a larger heap
(heapTotal 253–255 → 284–287 MiB: fewer of its collections started by outside memory). Measured
from outside as this bench does, in turns (60 s after the warm-up, two runs of each), the resident
set moved within its noise (means of 474 and 425 MiB before, 523 and 385 after), and the share of a
core too. The last run before the change, the same day, ended at 479 MiB, 567 at most, and over
gRPC, whose transport copies every queued request, at 660 and 664 MiB; the first after it at 372 and
430, 481 and 511 MiB. Their CPU shares (7.8 and 17.4 % before, 6.2 and 14.6 % after) say as much
about the machine as about the change: the later run's warm-up took 6.1 s, the earlier one's 7.9 s.
Since then a target far larger than the window (Run:ai's exporter,
about 40 MB) is encoded a part at a time, each part after its wait, rather than whole before it:
array buffers 87 and 109 MiB on average before, 75 and 68 after (in turns, two runs of each, in one
process as above); the resident set moved within its noise.

How the rows are measured (since 2026-12-07). The run starts with \`--trace-gc-nvp\` and
\`--trace-opt\`: the main thread's garbage collection is the pauses of the collections logged within
the window, with each full one's incremental marking steps. V8's other threads (Node.js 20 names
none of them) do the rest of the collectors' work — parallel scavenging, concurrent marking and
sweeping — and all of the optimizing compiler's, which compiles a function on them once it is hot,
and again after a deoptimization. Their CPU (from /proc/<pid>/task) cannot be split between the two
(the traces' own durations are wall times, which on two busy cores include waiting for a core), so
garbage collection's share is a range: from the main thread's collections alone to those with all of
the helpers' CPU. The first ${START_INTERVALS} intervals after the warm-up are measured apart: the
warm-up runs the simulation alone, so the scrape path (collecting, the SDK reader, encoding, the
transport) first runs there, and V8 compiles it as it turns hot (${result.start.compilations} functions in those
${result.start.measuredSeconds} s, ${result.compilations} in the ${result.measuredSeconds} s after them). Until 2026-12-07 the
table's window began 2 s after the warm-up and held that start: 6.4 % of a core over its first 45 s
against 5.0 % over the 45 s from 30 s later, in two runs the same hour. In the window after it, the
optimizing compiler still compiles a function a second or so: most are the scrape path's functions
optimized again after a deoptimization (the scheduler log's \`writeCycle\` meets cycles of another
shape — its first reads of \`cycle.gpuShortNodes\`, bytecode offsets 145 and 170 —, a target's
\`collect\` a label set of another shape), and after a full collection, optimized code whose embedded
maps died (\`--trace-deopt\`: "weak objects"). Their own timings add up to 0.65 s of wall time over
100 s of one run, an upper bound on their CPU.

A series' value is no longer a field of its Sample (2026-12-07): V8 keeps a number field that has
ever held a fraction in a box of its own, so each of the 439,000 Samples a platform run keeps and
each of the 145,000 points the kubelet's series keep (target-provider.ts) had one more object for
every full collection to mark. The values now sit in their keeper's list of numbers (catalogue.ts
\`SeriesSample\`, which V8 keeps unboxed in one block), and the kubelet's points read their sample's.
In a heap snapshot of the run after 70 s, 556,000 boxed numbers became 351,000
(the rest the simulation's: the GPUs' physics, the workloads' rhythms) and 2.71 million objects 2.54
million; measured in turns, two runs of each over 60 s after the warm-up and its first two
intervals: 5.5 and 5.3 % of a core before, 4.9 and 4.7 % after (V8's helpers 1.51 and 1.41 s against
1.06 and 1.05 s; 4 full collections each before, 2 and 3 after). The kubelet's series' Samples are
now their points too, the scrape setting their attributes (their labels with the target's
metrics_path) as it sets their time (target-provider.ts): 2.50 million objects became 2.31 million.
What that snapshot holds now: 437,000 Samples (38 MB: 88 bytes each, Node.js builds V8 without
pointer compression), 414,000 plain objects (the label sets and the SDK's per-family descriptors
and MetricData), 328,000 strings (52 MB: label values and the label sets' kept bytes), 320,000
boxed numbers (the simulation's), 149,000 property arrays (label sets with more labels than an
object holds in itself), 127,000 strings still in the pieces they were concatenated from (pod names
above all), and about 55 MB of array buffers outside the heap (the request slabs: six of 8 MiB, five
taken by the first scrape after the warm-up and one by the second, all kept for reuse).

The five were the metrics' (the sixth the logs'): a scrape's targets gathered into one request
(otlp-delivery.ts, \`Gathered\`) were copied into a body carved in the same slab, below the bodies
it copied, so each request in flight held its slab space twice until both were done, and a scrape
copied its ~100 MiB once more. Since 2026-12-07 a gathered request is the memory its targets'
bodies span, which the encoder wrote one below the other (RequestSlabs.holdJoined; a gathering ends
where a slab ran short and the next was taken): the metrics take four slabs and never copy a
request (\`copiedIn\` had been 3 % of the main thread's busy time in a profile). Read through the
inspector every 5 s for 90 s after the warm-up, one run of each on the same machine: array buffers
44 MiB on average (50 at most) after, 53 (62) before. The share of a core moved within this
machine's spread: over 60 s after the first two intervals, three runs of each in turns on the
Xeon of the table above, 3.7, 5.9 and 4.7 % before, 4.7, 3.5 and 5.1 % after (the table's run
before this one, 3.8 %, was on an AMD EPYC). A scrape now makes more, smaller requests (409 in
the table's 120 s against 346), the gatherings ending at the slabs' ends.

Since 2026-12-07 a run keeps no object per series. A target's series are columns (its families,
label sets, values and starts: constructs/src/catalogue.ts \`SeriesColumns\`, written over at every
collect), kube-state-metrics keeps a pod's series as columns too, and a scrape's metric holds its
points as columns that gpusynth's protobuf encoder and the request split read directly
(packages/emit/src/column-metric.ts); DataPoints are made only for a reader that asks for them (the
SDK's serializers, a stock exporter, OTLP JSON). A heap snapshot of this run 50 s after its warm-up:
717,000 objects against 1,160,000 (the 446,000 Samples gone, 37.5 MiB), 241 MB of heap against 249 (the
columns and each family's lists of this scrape's label sets and values, about 45 MiB, are what is
left per series). Four runs of each in turns over 90 s after 30 s past the warm-up (2026-12-07, this
machine): 5.31, 5.61, 4.31 and 4.56 % of a core against 6.50, 5.58, 5.10 and 4.80 % before; the
resident set at the end 332 to 358 MiB against 357 to 382, at most 370 to 393 against 385 to 393.
With \`--trace-gc\` over 90 s: 2 full collections (one every three scrapes), where there had been
about one a scrape; 168 scavenges of a young generation that V8 keeps at about a MiB, since what
a scrape now makes (the metrics' columns objects, about 4 MB, the SDK reader's per-target objects,
3 MB) dies at once. The OTLP JSON of six seeded offline runs is byte for byte the same, and the
protobuf the SDK serializer's (metrics-encoder.test). What outlives a scavenge (the sampling heap
profiler as above, 60 s): 47 MiB against 51, of which the log lines' text flattened as it is encoded
17.6 MiB, the GPU readings 5.2 MiB, the SDK's log records 3.5 MiB: the logs are now most of what is
promoted. Run first (before the scrape), the logs' export promoted more, not less (65 MiB): their
records are made as the simulation advances, before the frame's collect.

Since 2026-12-08 the command's bundle is CommonJS, each chunk compiled from a V8 code cache the
build writes (packages/cli/bin/code-cache.js, bench/results/cli-startup.md); a run's steady state is
the same code. Read from /proc at the end of 60 s after 30 s past the warm-up, five runs of one build
that day (2026-12-08, this machine): the resident set at the end 346, 348, 416, 419 and 431 MiB, the
share of a core 6.1 to 7.2 %; a build of the same code as ES modules, 333 and 357 MiB, 6.5 and 8.9 %.
One reading of the resident set moves by a quarter with when V8 last grew or shrank its heap, and
this machine's speed by as much within an hour: compare runs in turns, several of each.

Reproduce: \`node bench/live-platform.mjs\` (part of \`npx just bench\`).
`,
);
console.log(result);
