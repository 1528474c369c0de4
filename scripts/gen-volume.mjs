// Writes signals/volume.md: active series per source and family, and log records per minute,
// measured on the three shipped blueprints (packages/cli/src/volume.ts). The tests re-measure.
import { writeFileSync } from "node:fs";
import { loadBlueprint } from "../packages/blueprint/dist/index.js";
import { measureVolume, volumeMarkdown } from "../packages/cli/dist/volume.js";

const blueprints = ["lab", "enterprise", "platform"].map((name) => new URL(`../blueprints/${name}.yaml`, import.meta.url));
const volumes = blueprints.map((file) => measureVolume(loadBlueprint(file.pathname).blueprint));
writeFileSync(new URL("../signals/volume.md", import.meta.url), volumeMarkdown(volumes));
console.log("wrote signals/volume.md");
