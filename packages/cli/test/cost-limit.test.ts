/**
 * A blueprint that cannot run is refused before it starts: lab.yaml with a million arrivals a day
 * per generator on its 32 GPUs builds a backlog no scheduling cycle can work through. `validate`
 * prints the estimate, `run` (and report, calibrate, dump) refuses it with exit 2 naming the limit
 * and --no-cost-limit, and with
 * the override a live run's warm-up still answers /sd and ends within 2 s of SIGINT. The shipped
 * blueprints are within the limits.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { captureOutput, repoFile } from "./helpers.js";
import { ensureStopped, expectStoppedWithin, type LiveProcess, startLive } from "./live-process.js";

const dir = mkdtempSync(join(tmpdir(), "gpusynth-cost-"));
const flood = join(dir, "flood.yaml");
writeFileSync(flood, readFileSync(repoFile("blueprints/lab.yaml"), "utf8").replace(/^( +perDay:) 13$/m, "$1 1000000"));
// The same flood, its users deleting what has not started within 10 minutes.
const impatient = join(dir, "impatient.yaml");
writeFileSync(impatient, readFileSync(flood, "utf8").replace(/^( +)(priorityClass: \S+).*$/gm, "$1$2\n$1pendingPatience: 10m"));
let live: LiveProcess | undefined;
afterEach(() => ensureStopped(live));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function gpusynth(...args: string[]) {
  const { output, text } = captureOutput();
  const code = await main(args, output);
  return { code, ...text };
}

describe("the cost of a blueprint, estimated before it runs", () => {
  it("is in validate's summary: steady for the lab, a growing backlog beyond run's limits for the flood", async () => {
    const lab = await gpusynth("validate", repoFile("blueprints/lab.yaml"));
    expect(lab.code).toBe(0);
    expect(lab.out).toMatch(
      /estimated: about 46 workloads submitted a day; the backlog stays steady; 1d simulated takes under a second of CPU\n/,
    );
    const flooded = await gpusynth("validate", flood);
    expect(flooded.code).toBe(0);
    expect(flooded.out).toMatch(/estimated: about 3,542,857 workloads submitted a day; the backlog grows by about [\d,]+ workloads a day/);
    expect(flooded.out).toMatch(/beyond gpusynth run's limits .*: it needs --no-cost-limit\n/);
  });

  it("holds the backlog at what the users' patience leaves waiting, within run's limits", async () => {
    const { code, out } = await gpusynth("validate", impatient);
    expect(code).toBe(0);
    const held = out.match(
      /the backlog grows by about [\d,]+ workloads a day until its users give up \(pendingPatience, 10m\), then holds at about ([\d,]+);/,
    );
    // About 10 minutes of the flood's submissions (3.5 million a day): a simulated hour of it holds 20,000 pending.
    expect(Number(held?.[1]?.replaceAll(",", ""))).toBeGreaterThan(15_000);
    expect(Number(held?.[1]?.replaceAll(",", ""))).toBeLessThan(30_000);
    expect(out).not.toMatch(/beyond gpusynth run's limits/);
  });

  it.each([
    [
      "an offline hour",
      ["run", "--offline", "--duration", "1h"],
      /1h simulated would build a backlog of about [\d,]+ pending workloads \(the limit is 50,000/,
    ],
    ["a live run's warm-up", ["run", "--listen", "none"], /the 1d warm-up and a simulated day served would build a backlog/],
    ["a report", ["report", "--out", join(dir, "flood.html")], /1d simulated would build a backlog/],
    ["a calibration", ["calibrate", "--days", "1"], /the warm-up and 1 day\(s\) measured would build a backlog/],
    ["a dump", ["dump"], /6h simulated would build a backlog/],
  ])("refuses %s with exit 2, naming the limit and the override", async (_, args, message) => {
    const { code, err } = await gpusynth(...args, flood);
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(err).toMatch(/--no-cost-limit runs it anyway\n$/);
  });

  it.each(["lab", "enterprise", "platform"])("finds the shipped %s blueprint within the limits", async (name) => {
    const { out } = await gpusynth("validate", repoFile(`blueprints/${name}.yaml`));
    expect(out).not.toMatch(/beyond gpusynth run's limits/);
  });

  it("with --no-cost-limit, answers /sd during the warm-up and ends within 2 s of SIGINT", async () => {
    live = startLive(["--no-cost-limit", "--listen", "127.0.0.1:0", flood]);
    const base = await live.scrapeUrl();
    await live.waitFor(/warming up/);
    // Several seconds in, each scheduling cycle attempts thousands of pending workloads. Prometheus
    // waits 10 s for a scrape by default (scrape_timeout): each answer within that, as on a
    // machine whose two cores the rest of the suite shares.
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 750));
      const answer = await fetch(`${base}/sd`, { signal: AbortSignal.timeout(10_000) });
      expect(answer.status).toBe(200);
    }
    const stopped = await live.stop("SIGINT");
    expect(stopped.code).toBe(0);
    expectStoppedWithin(stopped, 2000);
  }, 60_000);
});
