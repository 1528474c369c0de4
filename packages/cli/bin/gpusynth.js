#!/usr/bin/env node
// The gpusynth command. Compiled code lives in ../dist, and the same code bundled in ../bundle,
// which starts in a fraction of the CPU time (both built by `npm ci` through `prepare`, and by
// `just build`: scripts/bundle-cli.mjs), with V8's code cache (code-cache.js). The bundle runs
// when it is at least as new as every package's build; after a `tsc -b` alone it is not, and
// ../dist runs.
import { bundleIsCurrent } from "./bundle-state.js";
import { requireBundle } from "./code-cache.js";

const { main } = bundleIsCurrent() ? requireBundle(new URL("../bundle/main.js", import.meta.url)) : await import("../dist/main.js");

// A reader that stops early (`gpusynth run --logs console | head`) is not an error.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

process.exitCode = await main(process.argv.slice(2));
