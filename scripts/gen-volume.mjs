// Writes signals/volume.md: active series per source and family, and log records per minute,
// measured on the three shipped blueprints (packages/cli/src/volume.ts) over the run
// check-signals makes, which measures again and compares.
import { writeFileSync } from "node:fs";
import { collectInventories } from "../packages/cli/dist/inventory-pool.js";
import { VOLUME_RUN, volumeMarkdown, volumeOf } from "../packages/cli/dist/volume.js";

const files = ["lab", "enterprise", "platform"].map((name) => new URL(`../blueprints/${name}.yaml`, import.meta.url).pathname);
const inventories = await collectInventories(files, VOLUME_RUN.durationMs, VOLUME_RUN.intervalMs);
writeFileSync(new URL("../signals/volume.md", import.meta.url), volumeMarkdown(inventories.map(volumeOf)));
console.log("wrote signals/volume.md");
