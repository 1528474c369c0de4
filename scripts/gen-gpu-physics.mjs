// The GPU-physics page (docs/gpu-physics.html): the H200 capture committed in
// packages/blueprint/data/h200-capture replayed through gpusynth's GPU model, each NVML reading
// beside the model's at the same instant. `--check` fails when the committed page is stale.
// Run after `npx tsc -b` (just gen does).
import { readFileSync, writeFileSync } from "node:fs";
import { GPU_MODELS } from "@gpusynth/blueprint";
import { captureRows, replayCapture } from "@gpusynth/constructs";
import { escapeHtml, measuredAgainstModelChart } from "../packages/cli/dist/report/charts.js";

const root = new URL("../", import.meta.url);
const captureDir = "packages/blueprint/data/h200-capture";
const out = new URL("docs/gpu-physics.html", root);

const csv = (path) => captureRows(readFileSync(new URL(path, root), "utf8"));

function section(title, dir) {
  const phases = JSON.parse(readFileSync(new URL(`${dir}/phases.json`, root), "utf8")).phases;
  const trace = csv(`${dir}/trace.csv`);
  const model = replayCapture({ phases, trace, gpm: csv(`${dir}/gpm.csv`) }, GPU_MODELS.H200);
  const seconds = trace.map((r) => Number(r.t));
  const measured = (column, scale = 1) => trace.map((r) => Number(r[column]) * scale);
  const charts = [
    measuredAgainstModelChart(
      "W",
      seconds,
      [{ name: "power", measured: measured("power_mw", 1 / 1000), modelled: model.map((r) => r.powerW) }],
      phases,
    ),
    measuredAgainstModelChart(
      "°C",
      seconds,
      [
        { name: "GPU (die)", measured: measured("temp_gpu"), modelled: model.map((r) => r.gpuTempC) },
        { name: "memory", measured: measured("temp_mem"), modelled: model.map((r) => r.memoryTempC) },
      ],
      phases,
    ),
    measuredAgainstModelChart(
      "MHz",
      seconds,
      [{ name: "SM clock", measured: measured("clk_sm"), modelled: model.map((r) => r.smClockMHz) }],
      phases,
    ),
  ];
  return `<h2>${escapeHtml(title)}</h2>\n${charts.map((svg) => `<figure class="chart">${svg}</figure>`).join("\n")}`;
}

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>gpusynth GPU model against a real H200</title>
<style>
body { font-family: system-ui, sans-serif; color: #222; max-width: 1400px; margin: 24px auto; padding: 0 16px; }
figure.chart { margin: 8px 0 24px; }
figure.chart svg { width: 100%; height: auto; }
p { max-width: 70em; line-height: 1.45; }
</style>
</head>
<body>
<h1>The GPU model against a real H200</h1>
<p>Solid lines: an NVIDIA H200 read through NVML every 100 ms (driver 580.159.04, 2026-12-04; the capture and its
README are in <code>${captureDir}</code>). Dashed lines: gpusynth's H200 replaying the same load — the capture's GPM
activity per phase — read at the same instants (<code>packages/constructs/src/gpu/replay.ts</code>; the constants are
in <code>packages/constructs/src/gpu/board.ts</code>, the comparison with its tolerances in
<code>packages/constructs/test/h200-replay.test.ts</code>). Absolute temperatures depend on the host's cooling: the
two captures idle 2.7 °C apart, and the model idles between them. Regenerate with <code>npx just gen</code>.</p>
${section("The first capture: idle, matrix products, cool-down, one second on and one off, copies", captureDir)}
${section("The longer capture: the slower thermal modes", `${captureDir}/long`)}
</body>
</html>
`;

if (process.argv.includes("--check")) {
  if (readFileSync(out, "utf8") !== page) {
    console.error("docs/gpu-physics.html is stale: run npx just gen");
    process.exit(1);
  }
} else writeFileSync(out, page);
