import { fileURLToPath } from "node:url";

/** The built-in default blueprint, blueprints/lab.yaml at the repository root. */
export const DEFAULT_BLUEPRINT = fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url));
