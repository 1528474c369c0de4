// Emission benchmark (issue: a 4,096-GPU cluster live at a 15 s interval — CPU per interval,
// RSS, bytes exported; goal under 20 % of one core and under 1 GiB RSS — and the ratio against
// the bare OpenTelemetry SDK exporting the same series from precomputed values).
// The 4,096-GPU cluster is blueprints/enterprise.yaml scaled ×8 (nodes, quotas, arrival rates),
// so per-GPU load stays at enterprise's ~1.5 workloads per GPU-day. Export goes through the
// SDK's OTLP protobuf serializer into a byte counter (no network), so the numbers are ours.
// Run: `npx just bench` (builds first). Writes bench/results/emit-speed.{json,md}.
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { ValueType } from "@opentelemetry/api";
import { ProtobufMetricsSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { parseDocument } from "yaml";
import { parseBlueprint } from "../packages/blueprint/dist/index.js";
import { ClusterMetrics } from "../packages/constructs/dist/index.js";
import { MetricsPipeline, RECEIVER_SCOPE_NAME, RECEIVER_SCOPE_VERSION, targetResourceAttributes } from "../packages/emit/dist/index.js";
import { Simulation } from "../packages/sim/dist/index.js";

const SCALE = 8;
const INTERVAL = 15_000;
const MEASURED = 12;

const doc = parseDocument(readFileSync(new URL("../blueprints/enterprise.yaml", import.meta.url), "utf8"));
const scaleIn = (path) => doc.setIn(path, doc.getIn(path) * SCALE);
for (let i = 0; i < doc.get("nodePools").items.length; i++) scaleIn(["nodePools", i, "nodes"]);
for (const section of ["departments", "projects"]) {
  doc.get(section).items.forEach((item, i) => {
    for (const pool of item.get("nodePools").items) {
      for (const key of ["deserved", "overQuotaWeight"]) if (pool.value.has(key)) scaleIn([section, i, "nodePools", pool.key.value, key]);
    }
  });
}
for (let i = 0; i < doc.get("workloads").items.length; i++) scaleIn(["workloads", i, "arrivals", "perDay"]);
doc.setIn(["cluster", "name"], "enterprise-x8");
const { blueprint } = parseBlueprint(doc.toString(), "enterprise ×8");
const gpus = blueprint.nodePools.reduce((sum, p) => sum + p.nodes * p.gpusPerNode, 0);

class Reader extends MetricReader {
  constructor() {
    super({ cardinalitySelector: () => 1_000_000 });
  }
  async onForceFlush() {}
  async onShutdown() {}
}

let bytes = 0;
const sink = {
  async export(metrics) {
    bytes += ProtobufMetricsSerializer.serializeRequest(metrics)?.byteLength ?? 0;
    return true;
  },
  async shutdown() {},
};

function cpuMs(since) {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

// Warm up: a simulated half day to reach a busy steady state.
const simulation = new Simulation(blueprint);
const metrics = new ClusterMetrics(blueprint);
simulation.onEvent(metrics.record);
simulation.runUntil(12 * 3_600_000);
const pipeline = new MetricsPipeline(sink);
let t = 12 * 3_600_000;
const scrapeOnce = async () => {
  t += INTERVAL;
  simulation.runUntil(t);
  const collected = metrics.collect(simulation.view());
  await pipeline.scrape(collected, blueprint.time.start + t);
  return collected;
};
for (let i = 0; i < 3; i++) await scrapeOnce(); // JIT warm-up

const ours = [];
let lastCollected = [];
for (let i = 0; i < MEASURED; i++) {
  bytes = 0;
  const start = process.cpuUsage();
  lastCollected = await scrapeOnce();
  ours.push({ cpuMs: cpuMs(start), bytes, points: lastCollected.reduce((s, x) => s + x.samples.length, 0) });
}
globalThis.gc?.();
const rssMiB = process.memoryUsage().rss / 2 ** 20;

// The floor: the bare SDK exporting the same series (same targets, names, attributes) from
// precomputed values — no simulation, no constructs, no restamping.
const bare = lastCollected.map(({ target, samples }) => {
  const reader = new Reader();
  const provider = new MeterProvider({ resource: resourceFromAttributes(targetResourceAttributes(target)), readers: [reader] });
  const meter = provider.getMeter(RECEIVER_SCOPE_NAME, RECEIVER_SCOPE_VERSION);
  const byFamily = new Map();
  for (const s of samples) byFamily.set(s.family, [...(byFamily.get(s.family) ?? []), s]);
  for (const [family, series] of byFamily) {
    const options = { description: family.help, valueType: ValueType.DOUBLE };
    const instrument =
      family.type === "counter" ? meter.createObservableCounter(family.name, options) : meter.createObservableGauge(family.name, options);
    instrument.addCallback((result) => {
      for (const s of series) result.observe(s.value, s.labels);
    });
  }
  return reader;
});
const bareRun = async () => {
  for (const reader of bare) await sink.export((await reader.collect()).resourceMetrics);
};
for (let i = 0; i < 3; i++) await bareRun();
const floor = [];
for (let i = 0; i < MEASURED; i++) {
  bytes = 0;
  const start = process.cpuUsage();
  await bareRun();
  floor.push({ cpuMs: cpuMs(start), bytes });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const oursCpu = median(ours.map((x) => x.cpuMs));
const floorCpu = median(floor.map((x) => x.cpuMs));
const result = {
  date: new Date().toISOString().slice(0, 10),
  machine: { cpu: cpus()[0]?.model ?? "unknown", cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  blueprint: "blueprints/enterprise.yaml scaled ×8",
  gpus,
  targets: lastCollected.length,
  pointsPerInterval: median(ours.map((x) => x.points)),
  intervalSeconds: INTERVAL / 1000,
  measuredIntervals: MEASURED,
  cpuMsPerInterval: Math.round(oursCpu),
  shareOfOneCore: +(oursCpu / INTERVAL).toFixed(3),
  rssMiB: Math.round(rssMiB),
  otlpProtobufBytesPerInterval: median(ours.map((x) => x.bytes)),
  bareSdkCpuMsPerInterval: Math.round(floorCpu),
  ratioToBareSdk: +(oursCpu / floorCpu).toFixed(2),
  goal: { shareOfOneCore: 0.2, rssMiB: 1024, met: oursCpu / INTERVAL < 0.2 && rssMiB < 1024 },
};
writeFileSync(new URL("./results/emit-speed.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
const md = `# Emission speed

Measured ${result.date} on ${result.machine.cpu} (${result.machine.cores} cores, ${result.machine.memoryGiB} GiB), Node.js ${result.machine.node}.

Cluster: ${result.blueprint} — ${gpus} GPUs, ${result.targets} scrape targets, ${result.pointsPerInterval} data points per ${result.intervalSeconds} s interval.
Each interval: advance the simulation, sample every target, collect through one SDK MeterProvider per target, restamp as the prometheus receiver does, serialise to OTLP protobuf (bytes counted, not sent). Medians of ${MEASURED} intervals after warm-up.

| measure | value | goal |
|---|---|---|
| CPU per interval | ${result.cpuMsPerInterval} ms | |
| share of one core at a 15 s interval | ${(result.shareOfOneCore * 100).toFixed(1)} % | under 20 % |
| RSS | ${result.rssMiB} MiB | under 1 GiB |
| OTLP protobuf bytes per interval | ${(result.otlpProtobufBytesPerInterval / 2 ** 20).toFixed(1)} MiB | |
| bare SDK, same series from precomputed values | ${result.bareSdkCpuMsPerInterval} ms per interval | the floor |
| gpusynth / bare SDK | ${result.ratioToBareSdk}× | |

Reproduce: \`npx just bench\` (or \`npm run bench\`).
`;
writeFileSync(new URL("./results/emit-speed.md", import.meta.url), md);
process.stdout.write(md);
