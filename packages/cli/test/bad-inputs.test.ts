/**
 * Bad inputs to `gpusynth run` and `validate`, as a user makes them: each is a clear user error
 * (exit code 2) naming the flag, variable or YAML path, what was expected and what was found,
 * without a stack trace; an output that fails during a run is exit code 1 with the path and the
 * cause, and leaves no partial or temporary file behind.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { checkOfflineEnd, grpcPortWarning } from "../src/commands/options.js";
import { main } from "../src/main.js";
import { OutputError, OutputFile } from "../src/output-file.js";
import { captureOutput, repoFile } from "./helpers.js";

const bin = repoFile("packages/cli/bin/gpusynth.js");
const lab = repoFile("blueprints/lab.yaml");
const labText = readFileSync(lab, "utf8");
const dir = mkdtempSync(join(tmpdir(), "gpusynth-bad-inputs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

const stackTrace = /\n\s+at /;

/** Runs the command in-process with `env` set, as main() would for the binary. */
async function gpusynth(args: readonly string[], env: Readonly<Record<string, string>> = {}) {
  for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"]) {
    vi.stubEnv(name, undefined);
  }
  vi.stubEnv("OTEL_METRIC_EXPORT_INTERVAL", undefined);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const { output, text } = captureOutput();
  const code = await main(args, output);
  return { code, stderr: text.err };
}

/** lab.yaml with one line replaced, written to the test's directory. */
function labWith(name: string, from: RegExp, to: string): string {
  expect(labText).toMatch(from);
  const file = join(dir, name);
  writeFileSync(file, labText.replace(from, to));
  return file;
}

/** A live run that a regression would let start: kept short and bound to no port. */
const live = ["run", "--listen", "none", "--speed", "100000", "--warmup", "0", "--duration", "1s", lab];
const offline = ["run", "--offline", "--duration", "1m", lab];

interface Case {
  readonly name: string;
  readonly args: () => readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** The flag, variable or YAML path, what was expected and what was found. */
  readonly message: RegExp;
}

const cases: Case[] = [
  {
    name: "a scheduling period of 0ms",
    args: () => ["run", "--offline", "--duration", "1m", labWith("period-0.yaml", /schedulingPeriod: 1s/, "schedulingPeriod: 0ms")],
    message: /period-0\.yaml:\d+:\d+: error: time\.schedulingPeriod: expected a scheduling period from 100ms to 1m .*, found "0ms"/,
  },
  {
    name: "a start in year 1",
    args: () => ["validate", labWith("year-1.yaml", /start: "2026-01-05T00:00:00Z"/, 'start: "0001-01-05T00:00:00Z"')],
    message: /year-1\.yaml:\d+:\d+: error: time\.start: expected a start from 1970-01-01T00:00:00Z .*, found "0001-01-05T00:00:00Z"/,
  },
  {
    name: "50 node pools of 20,000 nodes",
    args: () => {
      const pools = Array.from(
        { length: 50 },
        (_, i) =>
          `  - { name: p${i}, nodeLabel: { key: pool, value: p${i} }, nodes: 20000, gpuModel: H100-80GB-HBM3, gpusPerNode: 8, cpuCores: 112, memoryGiB: 2048 }`,
      );
      const file = join(dir, "huge.yaml");
      writeFileSync(file, labText.replace(/^nodePools:\n/m, `nodePools:\n${pools.join("\n")}\n`));
      return ["validate", file];
    },
    message: /huge\.yaml:\d+:\d+: error: nodePools\[0\]\.nodes: expected a number at most 16384, found 20000/,
  },
  {
    name: "more GPUs than one process simulates",
    args: () => ["validate", labWith("gpus.yaml", /nodes: 4\b(.*\n.*\n) {4}gpusPerNode: 8/, "nodes: 16384$1    gpusPerNode: 16")],
    message:
      /gpus\.yaml:\d+:\d+: error: nodePools: expected at most 131072 GPUs in one blueprint \(.*split a larger cluster into several blueprints.*\), found 262144 GPUs/,
  },
  {
    name: "a Run:ai job that is a path",
    args: () => ["validate", labWith("job.yaml", /job: metrics-exporter/, 'job: "../../sd"')],
    message:
      /job\.yaml:\d+:\d+: error: telemetry\.runai\.job: expected a job name of letters, digits, .*one URL path segment.*, found "\.\.\/\.\.\/sd"/,
  },
  {
    name: "a blueprint duration that overflows",
    args: () => ["validate", labWith("infinite.yaml", /schedulingPeriod: 1s/, `schedulingPeriod: ${"9".repeat(400)}s`)],
    message: /infinite\.yaml:\d+:\d+: error: time\.schedulingPeriod: expected a scheduling period from 100ms to 1m .*, found "9{20}/,
  },
  {
    name: "a block mapping nested 900 levels",
    args: () => {
      const file = join(dir, "deep.yaml");
      writeFileSync(file, Array.from({ length: 900 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n"));
      return ["validate", file];
    },
    message: /deep\.yaml:66: error: \(document root\): expected nesting of at most 64 levels, found more than 64 levels/,
  },
  {
    // Opening a FIFO for reading waits for a writer: validate must not.
    name: "a named pipe as a blueprint",
    args: () => {
      const fifo = join(dir, "blueprint.fifo");
      if (!existsSync(fifo)) execFileSync("mkfifo", [fifo]);
      return ["validate", fifo];
    },
    message: /blueprint\.fifo: error: .*expected a blueprint YAML file \(a regular file\), found a named pipe \(FIFO\)/,
  },
  {
    name: "/dev/zero as a blueprint",
    args: () => ["validate", "/dev/zero"],
    message: /\/dev\/zero: error: .*expected a blueprint YAML file \(a regular file\), found a character device/,
  },
  {
    name: "--interval 30d",
    args: () => ["run", "--interval", "30d", ...live.slice(1)],
    message: /--interval: expected a duration from 10ms to 1d such as 15s or 1m, found "30d"/,
  },
  {
    name: "--interval 1ms",
    args: () => ["run", "--interval", "1ms", ...offline.slice(1)],
    message: /--interval: expected a duration from 10ms to 1d .*, found "1ms"/,
  },
  {
    name: "--duration 0s",
    args: () => ["run", "--offline", "--duration", "0s", lab],
    message: /--duration: expected a positive duration of at most 3660d such as 90m, 24h or 7d, found "0s"/,
  },
  {
    name: "--duration that parses as Infinity",
    args: () => ["run", "--offline", "--duration", `${"9".repeat(400)}d`, lab],
    message: /--duration: expected a positive duration of at most 3660d .*, found "9{57}\.\.\."/,
  },
  {
    name: "--duration of centuries",
    args: () => ["run", "--offline", "--duration", "40000d", lab],
    message: /--duration: expected a positive duration of at most 3660d .*, found "40000d"/,
  },
  {
    name: "--speed 1e10",
    args: () => ["run", "--speed", "1e10", lab],
    message: /--speed: expected a positive number of at most 1000000000, found "1e10"/,
  },
  // One number grammar for every option (decimal: 16, 0.5, 1e9): no hex, no spaces.
  ...[
    ["--speed", "0x10", /--speed: expected a positive number of at most 1000000000, found "0x10"/],
    ["--speed", " 16", /--speed: expected a positive number of at most 1000000000, found " 16"/],
    ["--seed", "0x10", /--seed: expected an integer from 0 to 4294967295, found "0x10"/],
    ["--workers", "0x2", /--workers: expected an integer from 1 to \d+, found "0x2"/],
    ["--scheduler-verbosity", "0x3", /--scheduler-verbosity: expected an integer from 0 to 10, found "0x3"/],
  ].map(([flag, value, message]) => ({
    name: `${flag} ${value}`,
    args: () => ["run", flag as string, value as string, lab],
    message: message as RegExp,
  })),
  {
    name: "OTEL_METRIC_EXPORT_INTERVAL of 0",
    args: () => offline,
    env: { OTEL_METRIC_EXPORT_INTERVAL: "0" },
    message: /OTEL_METRIC_EXPORT_INTERVAL: expected milliseconds as an integer from 10 to 86400000 \(24h\), found "0"/,
  },
  {
    name: "OTEL_METRIC_EXPORT_INTERVAL of 30 days",
    args: () => offline,
    env: { OTEL_METRIC_EXPORT_INTERVAL: "2592000000" },
    message: /OTEL_METRIC_EXPORT_INTERVAL: expected .*, found "2592000000"/,
  },
  {
    name: "--otlp-endpoint that is not a URL",
    args: () => ["run", "--otlp-endpoint", "not a url", ...live.slice(1)],
    message: /--otlp-endpoint: expected an http:\/\/ or https:\/\/ URL such as http:\/\/localhost:4318, found "not a url"/,
  },
  {
    name: "--otlp-endpoint with a port above 65535",
    args: () => ["run", "--otlp-endpoint", "http://localhost:70000", ...live.slice(1)],
    message: /--otlp-endpoint: expected .* with a port from 1 to 65535, found port 70000 in "http:\/\/localhost:70000"/,
  },
  {
    name: "--otlp-endpoint without a scheme",
    args: () => ["run", "--otlp-protocol", "grpc", "--otlp-endpoint", "localhost:4317", ...live.slice(1)],
    message: /--otlp-endpoint: expected an http:\/\/ or https:\/\/ URL .*, found "localhost:4317" \(scheme "localhost"\)/,
  },
  {
    name: "OTEL_EXPORTER_OTLP_ENDPOINT that is not a URL",
    args: () => live,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: "not-a-url" },
    message: /OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:\/\/ or https:\/\/ URL .*, found "not-a-url"/,
  },
  {
    name: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT with port 0",
    args: () => live,
    env: { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://localhost:0" },
    message: /OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: expected .* with a port from 1 to 65535, found port 0/,
  },
  {
    name: "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT with another scheme",
    args: () => live,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4317", OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "ftp://collector:4317" },
    message:
      /OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: expected an http:\/\/ or https:\/\/ URL .*, found "ftp:\/\/collector:4317" \(scheme "ftp"\)/,
  },
  {
    name: "--otlp-json and --otlp-json-logs naming one file",
    args: () => ["run", "--otlp-json", join(dir, "both.jsonl"), "--otlp-json-logs", `${dir}/./both.jsonl`, ...offline.slice(1)],
    message: /--otlp-json-logs: expected a file other than --otlp-json's, found the same file ".*both\.jsonl"/,
  },
  {
    name: "--otlp-json and --otlp-json-logs naming one file through a link",
    args: () => {
      const target = join(dir, "real.jsonl");
      writeFileSync(target, "");
      rmSync(join(dir, "link.jsonl"), { force: true });
      symlinkSync(target, join(dir, "link.jsonl"));
      return ["run", "--otlp-json", target, "--otlp-json-logs", join(dir, "link.jsonl"), ...offline.slice(1)];
    },
    message: /--otlp-json-logs: expected a file other than --otlp-json's, found the same file ".*link\.jsonl"/,
  },
  {
    name: "--otlp-json in a directory that does not exist",
    args: () => ["run", "--otlp-json", join(dir, "missing", "m.jsonl"), ...offline.slice(1)],
    message: /--otlp-json: cannot write ".*missing\/m\.jsonl": cannot create a file in .*missing: ENOENT \(no such file or directory\)/,
  },
];

describe("bad inputs are user errors (exit code 2)", () => {
  it.each(cases)("$name", async ({ args, env, message }) => {
    const { code, stderr } = await gpusynth(args(), env);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(stackTrace);
    expect(code).toBe(2);
  });

  it("refuses an offline run that would end past OTLP's int64 nanoseconds", () => {
    expect(() => checkOfflineEnd(Date.UTC(2262, 0, 1), 200 * 86_400_000)).toThrow(
      /--duration: expected a run that ends by 2262-04-11T23:47:16\.854Z \(OTLP timestamps are int64 nanoseconds.*\), found 200d from time\.start 2262-01-01T00:00:00\.000Z, ending 2262-07-20/,
    );
    expect(() => checkOfflineEnd(Date.UTC(2199, 0, 1), 3_660 * 86_400_000)).not.toThrow();
  });
});

describe("a push to OTLP/gRPC's port with no protocol set (the default is OTLP/HTTP)", () => {
  it("warns, naming where the endpoint came from and how to push gRPC there", () => {
    const warning = grpcPortWarning(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4317" }, ["metrics"]);
    expect(warning).toMatch(/^gpusynth: warning: OTEL_EXPORTER_OTLP_ENDPOINT http:\/\/collector:4317 is on port 4317, OTLP\/gRPC's/);
    expect(warning).toContain("the push is OTLP/HTTP (http/protobuf");
    expect(warning).toContain("set OTEL_EXPORTER_OTLP_PROTOCOL=grpc or --otlp-protocol grpc");
    expect(grpcPortWarning("http://127.0.0.1:4317", {}, ["metrics", "logs"])).toMatch(
      /warning: --otlp-endpoint http:\/\/127\.0\.0\.1:4317 is on port 4317/,
    );
  });

  it("names a logs endpoint there when only the logs go to it", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "http://logs:4317" };
    expect(grpcPortWarning(undefined, env, ["metrics", "logs"])).toMatch(/warning: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT http:\/\/logs:4317/);
    // Without the logs pushed, nothing goes there.
    expect(grpcPortWarning(undefined, env, ["metrics"])).toBeUndefined();
  });

  it("says nothing of an endpoint on any other port", () => {
    expect(grpcPortWarning(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, ["metrics", "logs"])).toBeUndefined();
    expect(grpcPortWarning("https://otlp.example.com", {}, ["metrics"])).toBeUndefined();
  });
});

describe("the binary", () => {
  function run(...args: string[]) {
    const result = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: "utf8", timeout: 30_000 });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it("exits 2 without a stack trace where the clock used to become NaN (schedulingPeriod: 0ms)", () => {
    const { code, stderr } = run(
      "run",
      "--offline",
      "--duration",
      "1m",
      labWith("period-zero.yaml", /schedulingPeriod: 1s/, "schedulingPeriod: 0ms"),
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/time\.schedulingPeriod: expected a scheduling period from 100ms to 1m/);
    expect(stderr).not.toMatch(stackTrace);
  });

  it("exits 2 without a stack trace for an endpoint the OTLP exporter cannot parse", () => {
    const { code, stderr } = run("run", "--listen", "none", "--duration", "1s", "--otlp-endpoint", "not a url", lab);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^gpusynth run: --otlp-endpoint: expected an http:\/\/ or https:\/\/ URL/);
    expect(stderr).not.toMatch(stackTrace);
  });

  it("exits 1 with the flag, the path and the cause when the disk is full (/dev/full)", () => {
    const { code, stderr } = run("run", "--offline", "--duration", "1m", "--otlp-json", "/dev/full", lab);
    expect(stderr).toBe("gpusynth run: --otlp-json: cannot write /dev/full: ENOSPC (no space left on device)\n");
    expect(code).toBe(1);
  });

  it("ends quietly when the reader of /dev/stdout goes away (EPIPE)", async () => {
    const child = spawn(process.execPath, [bin, "run", "--offline", "--duration", "1h", "--otlp-json", "/dev/stdout", lab], { cwd: dir });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it("writes a regular file whole and leaves no temporary file", () => {
    const out = join(dir, "metrics.jsonl");
    const { code } = run("run", "--offline", "--duration", "1m", "--interval", "30s", "--otlp-json", out, lab);
    expect(code).toBe(0);
    const lines = readFileSync(out, "utf8").split("\n");
    expect(lines.pop()).toBe(""); // ends with a whole line
    for (const line of lines) expect(Object.keys(JSON.parse(line) as object)).toEqual(["resourceMetrics"]);
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });
});

describe("an output file whose write fails", () => {
  const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

  it("removes its temporary file, keeps the previous file and names flag, path and cause", () => {
    const out = mkdtempSync(join(dir, "full-"));
    const target = join(out, "metrics.jsonl");
    writeFileSync(target, "previous run\n");
    let calls = 0;
    // The first write goes through, the second finds the disk full: a partial file would remain.
    const file = OutputFile.open("otlp-json", target, (fd, buffer, offset, length) => {
      if (++calls > 1) throw enospc();
      return writeSync(fd, buffer, offset, length);
    });
    file.writeLine('{"resourceMetrics":[]}\n');
    expect(readdirSync(out)).toHaveLength(2); // the target and the temporary file
    let error: unknown;
    try {
      file.writeLine('{"resourceMetrics":[]}\n');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(OutputError);
    expect((error as OutputError).message).toBe(`--otlp-json: cannot write ${target}: ENOSPC (no space left on device)`);
    expect((error as OutputError).quiet).toBe(false);
    file.discard();
    expect(readdirSync(out)).toEqual(["metrics.jsonl"]);
    expect(readFileSync(target, "utf8")).toBe("previous run\n");
  });

  it("creates nothing when a new file's first write fails", () => {
    const out = mkdtempSync(join(dir, "new-"));
    const file = OutputFile.open("otlp-json-logs", join(out, "logs.jsonl"), () => {
      throw enospc();
    });
    expect(() => file.writeLine("x\n")).toThrow(/^--otlp-json-logs: cannot write .*logs\.jsonl: ENOSPC \(no space left on device\)$/);
    expect(readdirSync(out)).toEqual([]);
  });

  it("writes what a short write left over, and replaces the file only on commit", () => {
    const out = mkdtempSync(join(dir, "short-"));
    const target = join(out, "m.jsonl");
    // A pipe or a signal can cut a write short: at most 3 bytes at a time here.
    const file = OutputFile.open("otlp-json", target, (fd, buffer, offset, length) => writeSync(fd, buffer, offset, Math.min(3, length)));
    file.writeLine("0123456789\n");
    expect(readdirSync(out)).not.toContain("m.jsonl");
    file.commit();
    file.discard();
    expect(readdirSync(out)).toEqual(["m.jsonl"]);
    expect(readFileSync(target, "utf8")).toBe("0123456789\n");
  });
});
