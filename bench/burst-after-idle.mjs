// What a live run's interval costs when the process slept through the interval before it, against
// the same work run back to back. A live run is a burst every interval (advance the simulation,
// take the frame, collect and encode every target) and idle in between; emit-speed.mjs times
// intervals back to back. On a machine whose memory is slower to reach after its core was idle
// (a virtual machine's nested paging, a core's power states), the same burst costs more CPU time
// after the idle, whatever the program does: a control measures that with no gpusynth code at all.
//
// 1. The control: one pass of pointer chasing over 1.5 million heap objects (about 150 MB, in a
//    random order), timed back to back, after sleeping an interval, and after spinning on the
//    CPU for an interval without touching memory.
// 2. The run: blueprints/platform.yaml (4,096 GPUs) after a simulated day, each interval's frame
//    and pipeline (the SDK reader with gpusynth's MetricProducer, then OTLP protobuf requests of
//    at most 4 MiB, counted, not sent) as emit-speed.mjs measures them, in pairs: one right after
//    the interval before, one after sleeping the interval (15 s) first.
//
// Run: `npx just bench` (builds first) or `node --expose-gc bench/burst-after-idle.mjs`. Writes
// bench/results/burst-after-idle.{json,md}.
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { parseBlueprint } from "../packages/blueprint/dist/index.js";
import { ClusterRun } from "../packages/constructs/dist/index.js";
import { encodeMetrics, MetricsPipeline, RequestSlabs } from "../packages/emit/dist/index.js";
import { cpuMs, timedInterval } from "./timed-interval.mjs";

const INTERVAL_MS = 15_000;
const DAY_MS = 86_400_000;
const PAIRS = 4;
const CONTROL_ROUNDS = 3;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Keeps the thread busy for `ms` without touching the heap. */
function spin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  globalThis.spun = x;
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round1 = (x) => Math.round(x * 10) / 10;

// 1. The control: the same pass over the same objects, whatever came before it.
const OBJECTS = 1_500_000;
const objects = Array.from({ length: OBJECTS }, (_, i) => ({ i, next: null, pad: [i, i + 1] }));
{
  // A random cycle through all of them (a fixed LCG: the same order every run).
  const order = Array.from({ length: OBJECTS }, (_, i) => i);
  let seed = 1;
  for (let i = OBJECTS - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const j = seed % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  for (let i = 0; i < OBJECTS; i++) objects[order[i]].next = objects[order[(i + 1) % OBJECTS]];
}
/** One pass: its CPU time (what it read is kept where the optimizer cannot drop the reads). */
function chase() {
  const start = process.cpuUsage();
  let o = objects[0];
  let sum = 0;
  for (let k = 0; k < 400_000; k++) {
    sum += o.pad[0];
    o = o.next;
  }
  globalThis.chased = sum;
  return cpuMs(start);
}
chase();
chase();
const control = { backToBack: [], afterSleep: [], afterSpin: [] };
for (let round = 0; round < CONTROL_ROUNDS; round++) {
  control.backToBack.push(chase());
  await sleep(INTERVAL_MS);
  control.afterSleep.push(chase());
  spin(INTERVAL_MS);
  control.afterSpin.push(chase());
}
objects.length = 0;
globalThis.gc?.();

// 2. The run, as emit-speed.mjs drives it, on platform.yaml.
const file = new URL("../blueprints/platform.yaml", import.meta.url);
const { blueprint } = parseBlueprint(readFileSync(file, "utf8"), "blueprints/platform.yaml");
const slabs = new RequestSlabs();
const sink = {
  async export(metrics) {
    const { requests } = encodeMetrics(metrics, "protobuf", 4 * 2 ** 20, undefined, slabs);
    for (const request of requests) slabs.release(request.body);
    return true;
  },
  async shutdown() {},
};
const run = new ClusterRun(blueprint);
run.skipTo(DAY_MS);
const pipeline = new MetricsPipeline(sink);
let t = DAY_MS;
async function interval() {
  t += INTERVAL_MS;
  const { frameMs, pipelineMs } = await timedInterval(run, pipeline, t);
  return { frameMs, pipelineMs };
}
for (let i = 0; i < 3; i++) await interval(); // the JIT's warm-up
const intervals = { backToBack: [], afterSleep: [] };
for (let pair = 0; pair < PAIRS; pair++) {
  intervals.backToBack.push(await interval());
  await sleep(INTERVAL_MS);
  intervals.afterSleep.push(await interval());
}

const total = (list) => list.map((x) => x.frameMs + x.pipelineMs);
const summary = (list) => ({
  frameMs: round1(median(list.map((x) => x.frameMs))),
  pipelineMs: round1(median(list.map((x) => x.pipelineMs))),
  totalMs: round1(median(total(list))),
});
const result = {
  date: new Date().toISOString().slice(0, 10),
  machine: `${cpus()[0]?.model.trim()} (${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB)`,
  node: process.version,
  intervalMs: INTERVAL_MS,
  control: Object.fromEntries(Object.entries(control).map(([k, v]) => [k, { medianMs: round1(median(v)), runs: v.map(round1) }])),
  platform: {
    backToBack: summary(intervals.backToBack),
    afterSleep: summary(intervals.afterSleep),
    runs: { backToBack: total(intervals.backToBack).map(round1), afterSleep: total(intervals.afterSleep).map(round1) },
  },
};
const ratio = (a, b) => (a / b).toFixed(1);
const c = result.control;
const p = result.platform;
writeFileSync(new URL("results/burst-after-idle.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(
  new URL("results/burst-after-idle.md", import.meta.url),
  `# A burst after idle: what the live run's interval costs on this machine

Measured ${result.date} on ${result.machine}, Node.js ${result.node}. Reproduce: \`node --expose-gc bench/burst-after-idle.mjs\`
(part of \`npx just bench\`).

A live run works in a burst every interval and is idle in between; emit-speed.mjs times its
intervals back to back. The same work costs more CPU time when the process slept before it, on
this machine, with no gpusynth code involved (the control: one pass of pointer chasing over 1.5
million heap objects, about 150 MB, in a random order) and with a platform run's interval
(blueprints/platform.yaml after a simulated day: the frame, then the SDK reader and OTLP encoding
into requests of at most 4 MiB, counted, not sent), CPU time of the process, medians:

| work | back to back | after sleeping ${INTERVAL_MS / 1000} s | ratio | after spinning ${INTERVAL_MS / 1000} s |
|---|---|---|---|---|
| the control's pass | ${c.backToBack.medianMs} ms | ${c.afterSleep.medianMs} ms | ${ratio(c.afterSleep.medianMs, c.backToBack.medianMs)}× | ${c.afterSpin.medianMs} ms |
| a platform interval: frame | ${p.backToBack.frameMs} ms | ${p.afterSleep.frameMs} ms | ${ratio(p.afterSleep.frameMs, p.backToBack.frameMs)}× | |
| a platform interval: pipeline | ${p.backToBack.pipelineMs} ms | ${p.afterSleep.pipelineMs} ms | ${ratio(p.afterSleep.pipelineMs, p.backToBack.pipelineMs)}× | |
| a platform interval in all | ${p.backToBack.totalMs} ms | ${p.afterSleep.totalMs} ms | ${ratio(p.afterSleep.totalMs, p.backToBack.totalMs)}× | |

Each interval in turn (ms, in all): back to back ${p.runs.backToBack.join(", ")}; after sleeping ${p.runs.afterSleep.join(", ")}.
The control's passes: back to back ${c.backToBack.runs.join(", ")}; after sleeping ${c.afterSleep.runs.join(", ")}; after spinning ${c.afterSpin.runs.join(", ")}.

What this says: a share of a core measured from outside a live run on this machine
(bench/results/live-platform.md) counts every interval at the cost of a burst after idle, not at
emit-speed's. The machine is a Firecracker virtual machine under KVM (its kernel's command line,
\`nested_pvm=1\`, \`cpuidle_haltpoll.force=1\`): after its virtual core halts, the first touches of
memory cost several times what they cost a core that kept running, and a pass that touches
hundreds of megabytes pays it throughout. Nothing in the process changes that (V8's memory reducer
is not the cause: \`--no-memory-reducer\` gave the same slow frames, 200 to 340 ms against 80 to
100 ms back to back, 2026-12-08). What a program can change is how much memory a burst touches: a
run whose series are kept as fewer, denser objects pays less of it.
`,
);
console.log(JSON.stringify(result, null, 2));
