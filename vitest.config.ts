import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (name: string) => fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources; the CLI tests run the built binary.
    alias: {
      "@gpusynth/blueprint": src("blueprint"),
      "@gpusynth/sim": src("sim"),
      "@gpusynth/constructs": src("constructs"),
      "@gpusynth/emit": src("emit"),
    },
  },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    // Many files wait on child processes and wall-clock pacing: one worker per core, and at
    // least two (vitest's default of cores − 1 leaves a 2-core machine running files one by one).
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
