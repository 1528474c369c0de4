#!/usr/bin/env node
// The gpusynth command. Compiled code lives in ../dist (built by `npm ci` through `prepare`).
import { main } from "../dist/main.js";

process.exitCode = await main(process.argv.slice(2));
