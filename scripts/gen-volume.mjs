// Writes signals/volume.md: active series per source and family, and log records per minute,
// measured on the four shipped cluster blueprints (packages/cli/src/volume.ts) over the run
// check-signals makes, which measures again and compares.
import { writeFileSync } from "node:fs";
import { blueprintFiles, collectInventories } from "../packages/cli/dist/inventory-pool.js";
import { volumeMarkdown, volumeOf, volumeRun } from "../packages/cli/dist/volume.js";

const files = ["lab", "enterprise", "platform", "hyperscale"].map(
  (name) => new URL(`../blueprints/${name}.yaml`, import.meta.url).pathname,
);
const inventories = await collectInventories(
  blueprintFiles(files),
  (_file, blueprint) => volumeRun(blueprint).durationMs,
  (_file, blueprint) => volumeRun(blueprint).intervalMs,
);
writeFileSync(new URL("../signals/volume.md", import.meta.url), volumeMarkdown(inventories.map(volumeOf)));
console.log("wrote signals/volume.md");
