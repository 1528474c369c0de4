#!/usr/bin/env node
// The gpusynth command. Compiled code lives in ../dist (built by `npm ci` through `prepare`).
import { main } from "../dist/main.js";

// A reader that stops early (`gpusynth run --logs console | head`) is not an error.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

process.exitCode = await main(process.argv.slice(2));
