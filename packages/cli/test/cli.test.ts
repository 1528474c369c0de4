/**
 * The gpusynth command as a user runs it: the built binary in a child process, its output
 * and exit code. (`just test` builds before testing.)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { captureOutput } from "./helpers.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const bin = join(root, "packages/cli/bin/gpusynth.js");
const lab = join(root, "blueprints/lab.yaml");
const dir = mkdtempSync(join(tmpdir(), "gpusynth-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function gpusynth(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: "utf8", timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * The same command through main() in this process: for the many refusals and repeated runs
 * whose point is the message or the output, not the binary (a process each costs half a second
 * of CPU); the tests above run the binary itself.
 */
async function inProcess(...args: string[]) {
  const { output, text } = captureOutput();
  const code = await main(args, output);
  return { code, stdout: text.out, stderr: text.err };
}

const stackTrace = /\n\s+at .+\(.+:\d+:\d+\)/;

describe("gpusynth --help", () => {
  it.each([[], ["--help"], ["help"]])("lists the commands for %j", async (...args) => {
    // The binary with no argument; the flag and the command say the same through main().
    const { stdout } = args.length === 0 ? gpusynth() : await inProcess(...args);
    expect(stdout).toMatch(/Commands:\n\s+run\s.*\n\s+validate\s/);
  });

  it.each(["run", "validate"])("explains %s with usage, options and examples", async (command) => {
    const { code, stdout } = await inProcess(command, "--help");
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: gpusynth ${command}`);
    expect(stdout).toContain("Example");
  });

  it("rejects an unknown command with exit code 2", () => {
    const { code, stderr } = gpusynth("frobnicate");
    expect(code).toBe(2);
    expect(stderr).toContain('unknown command "frobnicate"');
    expect(stderr).not.toContain("did you mean");
  });

  it.each([
    ["runn", "run"],
    ["valdate", "validate"],
    ["reprot", "report"],
  ])("suggests the command meant by %s", async (typed, meant) => {
    const { code, stderr } = await inProcess(typed);
    expect(code).toBe(2);
    expect(stderr).toContain(`unknown command "${typed}"; did you mean "${meant}"?`);
    expect(stderr).not.toContain("Commands:");
  });

  it("explains a command through help <command>", async () => {
    const { code, stdout } = await inProcess("help", "run");
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: gpusynth run");
    expect((await inProcess("help", "runn")).stderr).toContain('did you mean "run"?');
  });

  it("prints its version", () => {
    const { version } = JSON.parse(readFileSync(join(root, "packages/cli/package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const { code, stdout } = gpusynth(flag);
      expect(code).toBe(0);
      expect(stdout).toBe(`gpusynth ${version}\n`);
    }
  });

  it("starts from its bundle, every chunk compiled from the code cache the build wrote", () => {
    // As bin/gpusynth.js starts it, then what each chunk's compile took (code-cache.js).
    const script = `import { chunksCompiled, requireBundle } from ${JSON.stringify(join(root, "packages/cli/bin/code-cache.js"))};
      const { main } = requireBundle(new URL(${JSON.stringify(`file://${join(root, "packages/cli/bundle/main.js")}`)}));
      await main(["validate", ${JSON.stringify(lab)}], { out: () => {}, err: () => {}, interactive: false });
      console.log(JSON.stringify(chunksCompiled()));`;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: dir, encoding: "utf8", timeout: 60_000 });
    expect(result.stderr).toBe("");
    const chunks = JSON.parse(result.stdout) as { chunk: string; cached: boolean }[];
    // main.js and the chunks validate needs: the blueprint's schema and its parser among them.
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.filter((c) => !c.cached)).toEqual([]);
  });
});

describe("gpusynth validate", () => {
  it("accepts the default blueprint when given no file", () => {
    const { code, stdout } = gpusynth("validate");
    expect(code).toBe(0);
    expect(stdout).toMatch(/valid blueprint "lab": 1 node pool\(s\), 32 GPUs/);
  });

  it("exits 2 and names file, line, path, expectation and finding for an invalid blueprint", () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "cluster: { name: x, clusterId: 7 }\nseed: 1\n");
    const { code, stderr } = gpusynth("validate", bad);
    expect(code).toBe(2);
    expect(stderr).toContain(`${bad}:1:`);
    expect(stderr).toMatch(/cluster\.clusterId: expected a string, found 7/);
    expect(stderr).toMatch(/time: expected an? \w+, found nothing \(the key is missing\)/);
    expect(stderr).not.toMatch(stackTrace);
  });

  it("exits 2 without a stack trace for a directory or a missing file", () => {
    for (const target of [dir, join(dir, "nope.yaml")]) {
      const { code, stderr } = gpusynth("validate", target);
      expect(code).toBe(2);
      expect(stderr).toMatch(/expected a (blueprint|readable blueprint) YAML file/);
      expect(stderr).not.toMatch(stackTrace);
    }
  });
});

describe("gpusynth run --offline --summary", () => {
  const { blueprint } = loadBlueprint(lab);

  it("prints a row per project and node pool of the blueprint", () => {
    const { code, stdout } = gpusynth("run", "--offline", "--duration", "24h", "--summary", lab);
    expect(code).toBe(0);
    expect(stdout).toContain("Simulated 1d.");
    for (const name of [...blueprint.projects.map((p) => p.name), ...blueprint.nodePools.map((p) => p.name)]) {
      expect(stdout).toMatch(new RegExp(`^${name}\\s+\\d+\\s+\\d+\\.\\d`, "m"));
    }
  });

  it("prints the same numbers as JSON, consistent with themselves", () => {
    const { code, stdout } = gpusynth("run", "--offline", "--duration", "3d", "--json", "--seed", "9");
    expect(code).toBe(0);
    const summary = JSON.parse(stdout) as {
      simulatedMs: number;
      projects: Array<{ submitted: number; started: number; pendingAtEnd: number; completed: number; failed: number; cancelled: number }>;
      nodePools: Array<{ submitted: number; meanAllocatedGpus: number; gpus: number }>;
    };
    expect(summary.simulatedMs).toBe(3 * 86_400_000);
    const total = (key: "submitted" | "started") => summary.projects.reduce((sum, p) => sum + p[key], 0);
    expect(total("submitted")).toBe(summary.nodePools.reduce((sum, p) => sum + p.submitted, 0));
    for (const p of summary.projects) expect(p.started + p.pendingAtEnd).toBeLessThanOrEqual(p.submitted);
    for (const pool of summary.nodePools) expect(pool.meanAllocatedGpus).toBeLessThanOrEqual(pool.gpus);
  });

  it("gives identical output for the same seed and different output for another", async () => {
    const a = gpusynth("run", "--offline", "--duration", "2d", "--json", "--seed", "1").stdout;
    expect((await inProcess("run", "--offline", "--duration", "2d", "--json", "--seed", "1")).stdout).toBe(a);
    expect((await inProcess("run", "--offline", "--duration", "2d", "--json", "--seed", "2")).stdout).not.toBe(a);
  });

  it.each([
    [["run", "--summary"], /--summary applies to offline runs: add --offline/],
    [["run", "--json", "--logs", "console"], /--json: --logs console writes the log records to stdout, where the report goes; choose one/],
    [["run", "--offline", "--json", "--logs", "console"], /--json: --logs console writes the log records to stdout/],
    [["run", "--offline", "--speed", "10"], /--speed applies to live runs/],
    [["run", "--listen", "nowhere"], /--listen: expected host:port/],
    [["run", "--offline", "--duration", "soon"], /--duration: expected a positive duration/],
    [["run", "--offline", "--seed", "1e3"], /--seed: expected an integer/],
    [["run", "--offline", "--bogus"], /unknown option "--bogus"\n/],
    [["run", "--ofline"], /unknown option "--ofline"; did you mean "--offline"\?/],
    [["run", "--offline", "--seed"], /--seed: expected a value after it/],
    [["run", "--offline", "--seed", "-1"], /--seed: expected a value; one that starts with "-" is written --seed=<value>/],
    [["run", "--offline", "--seed=-1"], /--seed: expected an integer from 0 to 4294967295, found "-1"/],
    [["run", "--offline=yes"], /--offline takes no value/],
  ])("refuses %j with exit code 2", async (args, message) => {
    const { code, stderr } = await inProcess(...args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(stackTrace);
  });
});

describe("gpusynth dump", () => {
  it("lists every source with its jobs and families, and the same as JSON", () => {
    const { code, stdout } = gpusynth("dump", "--duration", "30m", "--interval", "10m", lab);
    expect(code).toBe(0);
    for (const heading of [
      "## dcgm-exporter (job `nvidia-dcgm-exporter`)",
      "## kube-state-metrics (job `kube-state-metrics`)",
      "## runai (job `metrics-exporter`)",
      "## kai-scheduler (jobs",
    ]) {
      expect(stdout).toContain(heading);
    }
    expect(stdout).toMatch(
      /^\| `DCGM_FI_DEV_GPU_UTIL` \| gauge \| `gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname`, `DCGM_FI_DRIVER_VERSION`.* \| 32 \|$/m,
    );
    const json = JSON.parse(gpusynth("dump", "--duration", "30m", "--interval", "10m", "--format", "json", lab).stdout) as {
      sources: Array<{ area: string; families: Array<{ name: string; maxSeries: number }> }>;
    };
    const dcgm = json.sources.find((s) => s.area === "dcgm-exporter");
    expect(dcgm?.families.find((f) => f.name === "DCGM_FI_DEV_XID_ERRORS")?.maxSeries).toBe(32);
  });

  it("refuses an unknown format with exit code 2", async () => {
    const { code, stderr } = await inProcess("dump", "--format", "xml");
    expect(code).toBe(2);
    expect(stderr).toContain('--format: expected markdown or json, found "xml"');
  });
});
