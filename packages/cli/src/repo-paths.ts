import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Files of the gpusynth repository the command line reads, resolved from the installed package. */
const repoFile = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** The built-in default blueprint. */
export const DEFAULT_BLUEPRINT = repoFile("blueprints/lab.yaml");
/** The shipped blueprints: blueprints/*.yaml and blueprints/scenarios/*.yaml. */
export function shippedBlueprints(): string[] {
  const yaml = (dir: string) =>
    readdirSync(repoFile(dir))
      .filter((f) => f.endsWith(".yaml"))
      .sort()
      .map((f) => repoFile(`${dir}/${f}`));
  return [...yaml("blueprints"), ...yaml("blueprints/scenarios")];
}
/** The signal documentation. */
export const SIGNALS_DIR = repoFile("signals");
