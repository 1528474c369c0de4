// npm records an optional platform binary in package-lock.json only if the registry it
// installed from serves it. The registry these machines use serves rust-just's Linux x64
// binary only, so after `npm install` the lockfile lacks the other platforms and `npm ci`
// refuses to run ("Missing: rust-just-darwin-arm64@ from lock file"). This adds the missing
// entries with their os/cpu constraints: npm ci skips them on other platforms without
// fetching, and fetches them by version (no integrity recorded) where they match.
// Run after any `npm install` that rewrites the lockfile: node scripts/lock-platform-binaries.mjs
import { readFileSync, writeFileSync } from "node:fs";

const lockUrl = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(lockUrl, "utf8"));
const platform = (name) => {
  const [, os, cpu] = /-(darwin|linux|windows)-(\w+)$/.exec(name) ?? [];
  const cpuOf = { armv7: "arm", x64: "x64", arm64: "arm64", arm: "arm", loong64: "loong64", riscv64: "riscv64" };
  return { os: [os === "windows" ? "win32" : os], cpu: [cpuOf[cpu] ?? cpu] };
};

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.endsWith("node_modules/rust-just")) continue;
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key] !== undefined) continue;
    lock.packages[key] = { version, dev: true, license: entry.license, optional: true, ...platform(name) };
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
writeFileSync(lockUrl, `${JSON.stringify({ ...lock, packages: sorted }, null, 2)}\n`);
console.log(`package-lock.json: added ${added} platform binary entr${added === 1 ? "y" : "ies"}`);
