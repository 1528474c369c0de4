// Writes blueprints/blueprint.schema.json from the zod schema; with --check, fails when the
// committed file differs from what the schema generates (so it can never go stale).
import { readFileSync, writeFileSync } from "node:fs";
import { blueprintJsonSchema } from "../packages/blueprint/dist/index.js";

const target = new URL("../blueprints/blueprint.schema.json", import.meta.url);
const generated = `${JSON.stringify(blueprintJsonSchema(), null, 2)}\n`;
if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(target, "utf8");
  } catch {}
  if (current !== generated) {
    console.error("blueprints/blueprint.schema.json is stale: run `just gen` and commit the result.");
    process.exit(1);
  }
  console.log("blueprints/blueprint.schema.json is up to date.");
} else {
  writeFileSync(target, generated);
  console.log("wrote blueprints/blueprint.schema.json");
}
