/**
 * `--otlp-json` and `--otlp-json-logs` write gzip when the file name ends in .gz: the same lines
 * as the plain files once unzipped, a fraction of the bytes, and leakcheck reads them as they are.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { captureOutput, repoFile } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "gpusynth-gzip-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const blueprint = repoFile("blueprints/scenarios/preemption-storm.yaml");

async function offline(metrics: string, logs: string): Promise<string> {
  const { output, text } = captureOutput();
  const args = ["run", "--offline", "--duration", "10m", "--interval", "5m", "--otlp-json", metrics, "--otlp-json-logs", logs, blueprint];
  expect(await main(args, output), text.err).toBe(0);
  return text.err;
}

/** The gzip run, made once for both tests whatever their order. */
let zippedRun: Promise<string> | undefined;
const zipped = () => {
  zippedRun ??= offline(join(dir, "m.jsonl.gz"), join(dir, "l.jsonl.gz"));
  return zippedRun;
};

describe("gzip outputs", () => {
  it("hold the same lines as the plain files, in a fraction of the bytes", async () => {
    await offline(join(dir, "m.jsonl"), join(dir, "l.jsonl"));
    const said = await zipped();
    expect(said).toMatch(/wrote \d+ scrapes \(\d+ points\) to .*m\.jsonl\.gz/);
    for (const name of ["m.jsonl", "l.jsonl"]) {
      const plain = readFileSync(join(dir, name));
      const zipped = readFileSync(join(dir, `${name}.gz`));
      expect(gunzipSync(zipped).equals(plain), name).toBe(true);
      expect(statSync(join(dir, `${name}.gz`)).size, name).toBeLessThan(plain.length / 5);
    }
  }, 60_000);

  it("are read by leakcheck as they are: the raw output's names are found", async () => {
    await zipped();
    const { output, text } = captureOutput();
    const code = await main(["leakcheck", "--blueprint", blueprint, "--otlp-json", join(dir, "l.jsonl.gz"), "--limit", "1"], output);
    expect(code, text.out + text.err).toBe(1);
    expect(text.out).toMatch(/sensitive name/);
  }, 60_000);
});
