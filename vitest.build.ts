/**
 * Vitest's global setup: the packages' build made current before any test runs (`just build`: tsc
 * -b, then the command's bundle), since the tests run the built code (vitest.config.ts) and the
 * command's tests its bundle. Both steps skip what is already current (about 0.3 s then).
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL(".", import.meta.url));

export function setup(): void {
  try {
    execFileSync(process.execPath, [`${root}node_modules/.bin/just`, "build"], { cwd: root, stdio: "pipe" });
  } catch (error) {
    const output = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(
      `the tests run the built packages, and building them (just build) failed:\n${output.stdout ?? ""}${output.stderr ?? ""}`,
    );
  }
}
