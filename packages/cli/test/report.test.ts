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
import { main } from "../src/main.js";
import { PALETTE } from "../src/report/charts.js";
import { recordTimeline } from "../src/report/timeline.js";
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
    expect(timeline.moments.find((m) => m.kind === "failed")?.text).toMatch(/^pretrain \(llm\) failed: XID 95 on train-node-1 GPU 2$/);
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
    expect([...html.matchAll(/<figure class="chart" id="(\w+)"/g)].map((m) => m[1])).toEqual(["allocation", "backlog", "moments"]);
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

/** Pixels of exactly this colour in a PNG screenshot. */
function pixelsOf(png: PNG, hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  let count = 0;
  for (let i = 0; i < png.data.length; i += 4) if (png.data[i] === r && png.data[i + 1] === g && png.data[i + 2] === b) count++;
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

  it("paints each chart's series and each kind of moment in its colour", async () => {
    const tab = await (browser as Browser).newPage({ viewport: { width: 1100, height: 800 } });
    await tab.goto(`file://${page}`);
    const shot = async (id: string) => PNG.sync.read(await tab.locator(`#${id} svg`).screenshot());
    const allocation = await shot("allocation");
    const backlog = await shot("backlog");
    const moments = await shot("moments");
    // One pool and one project: the first palette colour draws a line across the plot.
    expect(pixelsOf(allocation, PALETTE[0] as string)).toBeGreaterThan(500);
    expect(pixelsOf(backlog, PALETTE[0] as string)).toBeGreaterThan(500);
    // Failed (2), GPU fault (3), node reboot (1): 5×12-pixel markers; no eviction happened.
    expect(pixelsOf(moments, "#e15759")).toBe(2 * 60);
    expect(pixelsOf(moments, "#b07aa1")).toBe(3 * 60);
    expect(pixelsOf(moments, "#4e79a7")).toBe(60);
    expect(pixelsOf(moments, "#f28e2b")).toBe(0);
    // A blank page would have passed none of the above; an empty chart would be one colour.
    expect(new Set(allocation.data).size).toBeGreaterThan(2);
  }, 30_000);
});
