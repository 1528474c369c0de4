// Screenshots of each shipped scenario's report, committed under docs/report/ so that a reader
// sees what `gpusynth report` draws before running it: the CLI writes each page, headless
// Chromium (Debian's package, as the browser test uses) photographs it at a laptop's width.
// Run after a change to the report: `just report-screenshots`.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
/** Each scenario for as long as its story takes (blueprints/scenarios/*.yaml). */
const SCENARIOS = [
  ["gpu-fault", "5h"],
  ["quota-exhaustion", "3h"],
  ["preemption-storm", "3h"],
  ["crash-loop", "1h"],
  ["memory-pressure", "1h"],
];

if (!existsSync(CHROMIUM)) {
  console.error(`report-screenshots: needs Chromium at ${CHROMIUM} (apt-get install chromium)`);
  process.exit(1);
}
const work = mkdtempSync(join(tmpdir(), "gpusynth-screenshots-"));
mkdirSync("docs/report", { recursive: true });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
try {
  for (const [scenario, duration] of SCENARIOS) {
    const page = join(work, `${scenario}.html`);
    execFileSync(
      "node",
      ["packages/cli/bin/gpusynth.js", "report", `blueprints/scenarios/${scenario}.yaml`, "--duration", duration, "--out", page],
      {
        stdio: "inherit",
      },
    );
    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await tab.goto(`file://${page}`);
    await tab.screenshot({ path: `docs/report/${scenario}.png`, fullPage: true });
    await tab.close();
    console.log(`docs/report/${scenario}.png`);
  }
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
