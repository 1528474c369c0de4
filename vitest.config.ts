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
  },
});
