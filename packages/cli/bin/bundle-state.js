// Whether the command's bundle (../bundle, scripts/bundle-cli.mjs) is as new as the TypeScript
// build it was made from: its stamp, written once it is whole, at least as new as every package's
// dist/.tsbuildinfo (which `tsc -b` rewrites only when it rebuilds that package). The command runs
// the bundle only then (gpusynth.js), and the bundling script skips itself then.
import { statSync } from "node:fs";

const BUILT_PACKAGES = ["blueprint", "sim", "constructs", "emit", "cli"];

/** Where the bundle goes, and the stamp written after it. */
export const BUNDLE_DIR = new URL("../bundle/", import.meta.url);
export const BUNDLE_STAMP = new URL(".built", BUNDLE_DIR);

const modifiedAt = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs;

export function bundleIsCurrent() {
  const bundledAt = modifiedAt(BUNDLE_STAMP);
  return (
    bundledAt !== undefined &&
    BUILT_PACKAGES.every((name) => (modifiedAt(new URL(`../../${name}/dist/.tsbuildinfo`, import.meta.url)) ?? 0) <= bundledAt)
  );
}
