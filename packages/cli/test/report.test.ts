/**
 * gpusynth report: the page's data agree with the simulation's own events, the command fails
 * clearly on bad arguments, and in headless Chromium (Debian's package; .ci/run installs it)
 * every chart actually paints its series and markers.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { type Browser, chromium } from "playwright-core";
import { PNG } from "pngjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { namesIn, sensitiveNames } from "../src/leakcheck/sensitive.js";
import { main } from "../src/main.js";
import { NO_DATA, PALETTE } from "../src/report/charts.js";
import { LANES, NODE_STATE_COLORS } from "../src/report/page.js";
import { NODE_STATES, recordTimeline } from "../src/report/timeline.js";
import { captureOutput, eventsOf } from "./helpers.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const HOUR = 3_600_000;
const CHROMIUM = "/usr/bin/chromium";
if (!existsSync(CHROMIUM) && process.env.CI === "true") throw new Error("CI must provide Chromium: .ci/run installs the Debian package");

describe("the report's data", () => {
  it("puts every failure, eviction, GPU fault and reboot of the run on the timeline, at its time", () => {
    const file = "blueprints/scenarios/gpu-fault.yaml";
    const events = eventsOf(file, 5 * HOUR);
    const timeline = recordTimeline(loadBlueprint(repo(file)).blueprint, 5 * HOUR);
    const expected = events.flatMap((e) =>
      e.kind === "WorkloadFailed" || e.kind === "WorkloadPreempted" || e.kind === "GpuFault" || e.kind === "NodeRebootStarted" ? [e.t] : [],
    );
    expect(timeline.moments.map((m) => m.t)).toEqual(expected);
    expect(timeline.moments.map((m) => m.kind).sort()).toEqual(["failed", "failed", "gpu-fault", "gpu-fault", "gpu-fault", "node-reboot"]);
    expect(timeline.moments.find((m) => m.kind === "failed")?.text).toMatch(
      /^pretrain \(llm\) failed: XID 95 on train-node-1 GPU 2, its other ranks evicted by KAI as a stale gang$/,
    );
  });

  it("samples allocation within each pool's GPUs and the backlog the scheduler held", () => {
    const file = "blueprints/scenarios/quota-exhaustion.yaml";
    const { blueprint } = loadBlueprint(repo(file));
    const timeline = recordTimeline(blueprint, 6 * HOUR);
    for (const pool of timeline.allocation) for (const held of pool.values) expect(held).toBeLessThanOrEqual(pool.capacity);
    // The scenario's backlog: workloads wait from 00:05, drain after 02:00, all have run by 06:00.
    const research = timeline.backlog.find((s) => s.name === "research")?.values ?? [];
    const at = (ms: number) => research[timeline.times.indexOf(ms)] ?? Number.NaN;
    expect(at(2 * 60_000)).toBe(0);
    expect(at(HOUR)).toBeGreaterThanOrEqual(3);
    expect(at(6 * HOUR)).toBe(0);
  });
});

describe("the report's per-GPU, per-node and waiting data", () => {
  const file = "blueprints/scenarios/gpu-fault.yaml";
  const events = eventsOf(file, 5 * HOUR);
  const timeline = recordTimeline(loadBlueprint(repo(file)).blueprint, 5 * HOUR);
  const step = (timeline.times[1] as number) - (timeline.times[0] as number);
  const rowOf = (node: string, gpu: number) => timeline.gpuRows.findIndex((r) => r.label === `${node} GPU ${gpu}`);
  const sampleAfter = (t: number) => timeline.times.findIndex((s) => s >= t);

  it("draws every started pod as a bar on each GPU it held, from the sample after it started", () => {
    expect(timeline.gpusPerRow).toBe(1);
    const started = events.flatMap((e) =>
      e.kind === "WorkloadStarted"
        ? e.pods.flatMap((p) => p.gpus.map((g) => ({ t: e.t, row: rowOf(p.node, g.index), workload: e.workload.name })))
        : [],
    );
    expect(started.length).toBeGreaterThan(16);
    for (const s of started) {
      const bar = timeline.occupancy.find((o) => o.row === s.row && o.workload === s.workload && o.from >= s.t && o.from < s.t + step);
      expect(bar, `${s.workload} on row ${s.row}`).toBeDefined();
    }
    // Nothing else: every bar is a started pod's.
    expect(timeline.occupancy.length).toBe(started.length);
  });

  it("shows the rebooting node NotReady between its reboot and Ready, and a fallen GPU without data", () => {
    const reboot = events.find((e) => e.kind === "NodeRebootStarted");
    const ready = events.find((e) => e.kind === "NodeReady");
    const offBus = events.find((e) => e.kind === "GpuFault" && e.xid === 79);
    if (reboot?.kind !== "NodeRebootStarted" || ready === undefined || offBus?.kind !== "GpuFault") throw new Error("the scenario changed");
    const node = timeline.nodes.find((n) => n.name === reboot.node)?.states ?? [];
    const rebooting = NODE_STATES.indexOf("NotReady (rebooting)");
    expect(node[sampleAfter(reboot.t)]).toBe(rebooting);
    expect(node[sampleAfter(ready.t) + 1]).toBe(NODE_STATES.indexOf("Ready"));
    expect(node.filter((s) => s === rebooting).length).toBe(sampleAfter(ready.t) - sampleAfter(reboot.t));
    const fallen = timeline.gpuRows[rowOf(offBus.node, offBus.gpu.index)]?.utilisation ?? [];
    expect(fallen[sampleAfter(offBus.t)]).toBeNull();
    expect(fallen[sampleAfter(offBus.t) - 1]).not.toBeNull();
  });

  it("records each workload's wait before its first start, as the simulation measured it", () => {
    const firstStarts = events.flatMap((e) => (e.kind === "WorkloadStarted" && e.attempt === 1 ? [e.waitedMs] : []));
    expect(timeline.waits.filter((w) => w.started).map((w) => w.waitedMs)).toEqual(firstStarts);
  });

  it("splits the waiting pods by the reason the scheduler gave, adding up to the backlog", () => {
    const quota = recordTimeline(loadBlueprint(repo("blueprints/scenarios/quota-exhaustion.yaml")).blueprint, 3 * HOUR);
    quota.times.forEach((_, i) => {
      const byProject = quota.backlog.reduce((n, s) => n + (s.values[i] ?? 0), 0);
      expect(quota.backlogByReason.reduce((n, s) => n + (s.values[i] ?? 0), 0)).toBe(byProject);
    });
    const seen = quota.backlogByReason.filter((s) => s.values.some((v) => v > 0)).map((s) => s.name);
    expect(seen).toEqual(expect.arrayContaining(["OverLimit", "NonPreemptibleOverQuota"]));
  });
});

describe("gpusynth report", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-report-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes a self-contained page and says what it drew", async () => {
    const out = join(dir, "storm.html");
    const { output, text } = captureOutput();
    expect(await main(["report", repo("blueprints/scenarios/preemption-storm.yaml"), "--duration", "3h", "--out", out], output)).toBe(0);
    expect(text.out).toMatch(/storm\.html: \d+ samples of 1 node pool\(s\) and 2 project\(s\)/);
    const html = readFileSync(out, "utf8");
    expect(html).not.toMatch(/<script|src=|href=/);
    // Users are people: the page (and so its screenshots under docs/report/) names none.
    const users = sensitiveNames(loadBlueprint(repo("blueprints/scenarios/preemption-storm.yaml")).blueprint).filter(
      (n) => n.kind === "user",
    );
    expect(users.length).toBeGreaterThan(0);
    expect(namesIn(html, users)).toEqual([]);
    expect([...html.matchAll(/<figure class="chart" id="(\w+)"/g)].map((m) => m[1])).toEqual([
      "allocation",
      "projects",
      "quota",
      "utilisation",
      "occupancy",
      "nodes",
      "moments",
      "pending",
      "backlog",
      "waits",
    ]);
  });

  it.each([
    [["report", "--duration", "3h"], /--out: expected the HTML file to write/],
    [["report", "--out", "/nonexistent-dir/r.html"], /--out: cannot write "\/nonexistent-dir\/r.html": .*ENOENT/],
    [["report", "--out", "x.html", "--duration", "soon"], /--duration: expected a positive duration/],
  ])("%j fails with a clear message", async (args, message) => {
    const { output, text } = captureOutput();
    expect(await main(args, output)).toBe(2);
    expect(text.err).toMatch(message);
  });
});

/**
 * Pixels of this colour in a PNG screenshot: exactly, or within `tolerance` (the sum of the
 * channels' differences) where small marks are drawn antialiased between pixels.
 */
function pixelsOf(png: PNG, hex: string, tolerance = 0): number {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
  let count = 0;
  for (let i = 0; i < png.data.length; i += 4)
    if (
      Math.abs((png.data[i] as number) - r) + Math.abs((png.data[i + 1] as number) - g) + Math.abs((png.data[i + 2] as number) - b) <=
      tolerance
    )
      count++;
  return count;
}

describe.skipIf(!existsSync(CHROMIUM))("the report in headless Chromium", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpusynth-report-browser-"));
  const page = join(dir, "fault.html");
  let browser: Browser | undefined;

  beforeAll(async () => {
    const { output } = captureOutput();
    await main(["report", repo("blueprints/scenarios/gpu-fault.yaml"), "--duration", "5h", "--out", page], output);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("paints each chart's data in its colours, with XIDs and node names drawn, not hovered", async () => {
    const tab = await (browser as Browser).newPage({ viewport: { width: 1400, height: 900 } });
    await tab.goto(`file://${page}`);
    const shot = async (id: string) => PNG.sync.read(await tab.locator(`#${id} svg`).first().screenshot());
    // One pool and one project: the first palette colour fills the allocation areas and the bars.
    expect(pixelsOf(await shot("allocation"), PALETTE[0] as string)).toBeGreaterThan(5_000);
    expect(pixelsOf(await shot("occupancy"), PALETTE[0] as string)).toBeGreaterThan(5_000);
    // The heatmap: busy GPUs in the darkest blue, the GPU that fell off the bus in no-data grey.
    const utilisation = await shot("utilisation");
    expect(pixelsOf(utilisation, "#08306b")).toBeGreaterThan(100);
    expect(pixelsOf(utilisation, NO_DATA)).toBeGreaterThan(100);
    // The node chart: the reboot painted NotReady, and each XID's code written beside its mark.
    expect(pixelsOf(await shot("nodes"), NODE_STATE_COLORS["NotReady (rebooting)"])).toBeGreaterThan(200);
    const written = await tab.locator("#nodes svg text").allTextContents();
    expect(written.filter((t) => /^XID \d+$/.test(t)).sort()).toEqual(["XID 63", "XID 79", "XID 95"]);
    expect(written).toEqual(expect.arrayContaining(["train-node-0", "train-node-1"]));
    // Failed (2), GPU fault (3), node reboot (1); no eviction happened.
    const moments = await shot("moments");
    for (const lane of LANES) {
      const painted = pixelsOf(moments, lane.color, 24);
      if (lane.kind === "evicted") expect(painted, lane.name).toBe(0);
      else expect(painted, lane.name).toBeGreaterThan(30);
    }
  }, 30_000);
});
