/**
 * The container log files a node keeps under /var/log/pods, written from the records gpusynth
 * pushes as the collector's filelog receiver: what a node-agent collector (the OpenTelemetry
 * Collector Helm chart's logsCollection preset) tails. The pinned behaviour, from source:
 *
 * - Paths: `<namespace>_<pod>_<uid>/<container>/<restartCount>.log` (kubelet v1.30.2
 *   pkg/kubelet/kuberuntime/helpers.go, BuildPodLogsDirectory / buildContainerLogsPath).
 * - Lines in the CRI format containerd writes (v1.7.18 pkg/cri/io/logger.go):
 *   `<RFC3339Nano time> <stream> <P|F> <content>\n`; content over max_container_log_line_size
 *   (16384 bytes, pkg/cri/config/config_unix.go) is cut by bytes into 16384-byte `P` records and a
 *   last `F` record.
 * - Rotation as the kubelet's container log manager does it (pkg/kubelet/logs/
 *   container_log_manager.go): every containerLogMonitorInterval (10 s) a running container's
 *   file of at least containerLogMaxSize is rotated: rotated files beyond the newest
 *   containerLogMaxFiles − 2 are removed, the rest gzipped to `.gz`, and the live file renamed to
 *   `<n>.log.<YYYYMMDD-hhmmss>` before the runtime opens a new one.
 * - A restarted container writes `<restartCount>.log` beside the last one; the kubelet's
 *   container GC keeps one dead container per pod and name (MaxPerPodContainer 1), so older
 *   attempts' files go.
 *
 * Every time here is the records' (the consumers' clock), so an offline run writes the same files
 * at every speed, and the node's clock is UTC.
 */

import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from "node:fs";
import { readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import type { LogsSink } from "./logs-pipeline.js";

/** containerd's max_container_log_line_size default: longer content is split into partial records. */
export const MAX_CONTAINER_LOG_LINE_BYTES = 16_384;

/** The kubelet's rotation settings (KubeletConfiguration; v1beta1 defaults.go at v1.30.2). */
export interface ContainerLogRotation {
  /** containerLogMaxSize in bytes (default 10Mi). */
  readonly maxSizeBytes: number;
  /** containerLogMaxFiles, the live file included (default 5; the kubelet refuses fewer than 2). */
  readonly maxFiles: number;
  /** containerLogMonitorInterval in ms (default 10 s; at least 3 s). */
  readonly monitorIntervalMs: number;
}

export const KUBELET_LOG_ROTATION: ContainerLogRotation = { maxSizeBytes: 10 * 1024 * 1024, maxFiles: 5, monitorIntervalMs: 10_000 };

/** One container's directory and the attempt whose file is live. */
interface ContainerLog {
  readonly dir: string;
  restart: number;
  fd: number;
  size: number;
}

/** The container a filelog record's line belongs to, from the resource the container operator gives it. */
function containerOf(record: ReadableLogRecord): { dir: string; restart: number } | undefined {
  const r = record.resource.attributes;
  const namespace = r["k8s.namespace.name"];
  const pod = r["k8s.pod.name"];
  const uid = r["k8s.pod.uid"];
  const container = r["k8s.container.name"];
  const restart = Number(r["k8s.container.restart_count"]);
  if (typeof namespace !== "string" || typeof pod !== "string" || typeof uid !== "string" || typeof container !== "string")
    return undefined;
  if (record.attributes["log.file.path"] === undefined || !Number.isInteger(restart)) return undefined;
  return { dir: join(`${namespace}_${pod}_${uid}`, container), restart };
}

export class PodLogFiles implements LogsSink {
  private readonly containers = new Map<string, ContainerLog>();
  /** A source's records share one resource object: its container is worked out once. */
  private readonly containerOfResource = new WeakMap<object, { dir: string; restart: number } | null>();
  /** Compressions of rotated files, done in order off the event loop (the kubelet's worker does them apart too). */
  private compressing: Promise<void> = Promise.resolve();
  private readonly stamp = new TimeStamp();
  /** The next instant (ms) the kubelet's monitor looks at the files. */
  private nextCheckMs: number | undefined;

  constructor(
    private readonly root: string,
    private readonly rotation: ContainerLogRotation = KUBELET_LOG_ROTATION,
  ) {}

  async export(records: ReadableLogRecord[]): Promise<boolean> {
    // One write per file per batch: the lines of a container are gathered between rotation checks.
    const pending = new Map<ContainerLog, (string | Buffer)[]>();
    const flush = () => {
      for (const [log, lines] of pending) this.append(log, toBytes(lines));
      pending.clear();
    };
    for (const record of records) {
      let container = this.containerOfResource.get(record.resource);
      if (container === undefined) {
        container = containerOf(record) ?? null;
        this.containerOfResource.set(record.resource, container);
      }
      if (container === null) continue; // not a container's file (a Kubernetes event)
      const timeMs = record.hrTime[0] * 1000 + record.hrTime[1] / 1e6;
      this.nextCheckMs ??= nextMultiple(timeMs, this.rotation.monitorIntervalMs);
      if (timeMs >= this.nextCheckMs) {
        flush();
        for (; this.nextCheckMs <= timeMs; this.nextCheckMs += this.rotation.monitorIntervalMs) this.rotateAll(this.nextCheckMs);
      }
      // A restarted container writes a new file: what the last attempt wrote goes to its own first.
      if ((this.containers.get(container.dir)?.restart ?? container.restart) !== container.restart) flush();
      const log = this.logOf(container.dir, container.restart);
      let lines = pending.get(log);
      if (lines === undefined) {
        lines = [];
        pending.set(log, lines);
      }
      lines.push(criLines(record, this.stamp));
    }
    flush();
    return true;
  }

  async shutdown(): Promise<void> {
    for (const log of this.containers.values()) closeSync(log.fd);
    this.containers.clear();
    await this.compressing;
  }

  private logOf(dir: string, restart: number): ContainerLog {
    let log = this.containers.get(dir);
    if (log !== undefined && log.restart === restart) return log;
    const path = join(this.root, dir);
    mkdirSync(path, { recursive: true, mode: 0o755 });
    if (log !== undefined) {
      // A new attempt: the last one's files stay (one dead container kept), older ones go.
      closeSync(log.fd);
      for (const name of readdirSync(path)) {
        const attempt = /^(\d+)\.log(\..*)?$/.exec(name);
        if (attempt !== null && Number(attempt[1]) < log.restart) rmSync(join(path, name));
      }
      log.restart = restart;
      log.fd = openLog(path, restart);
      log.size = fstatSync(log.fd).size;
      return log;
    }
    const fd = openLog(path, restart);
    log = { dir: path, restart, fd, size: fstatSync(fd).size };
    this.containers.set(dir, log);
    return log;
  }

  private append(log: ContainerLog, bytes: Buffer): void {
    writeSync(log.fd, bytes);
    log.size += bytes.length;
  }

  /** The kubelet's monitor at `nowMs`: each live file of at least the maximum size is rotated. */
  private rotateAll(nowMs: number): void {
    for (const log of this.containers.values()) if (log.size >= this.rotation.maxSizeBytes) this.rotate(log, nowMs);
  }

  private rotate(log: ContainerLog, nowMs: number): void {
    const live = `${log.restart}.log`;
    const rotatedNow = `${live}.${rotationStamp(nowMs)}`;
    closeSync(log.fd);
    renameSync(join(log.dir, live), join(log.dir, rotatedNow));
    log.fd = openLog(log.dir, log.restart);
    log.size = 0;
    // Then, in order and off the event loop, what the kubelet does before its rename: of the files
    // rotated earlier the newest containerLogMaxFiles − 2 stay (with the live file and the one
    // rotated now, containerLogMaxFiles), older ones are removed, the rest gzipped.
    const { dir } = log;
    const keep = this.rotation.maxFiles - 2;
    this.compressing = this.compressing.then(() => compressRotated(dir, live, rotatedNow, keep));
  }
}

/** Removes the older rotated files of `live` past `keep` (the one rotated now aside) and gzips the rest as the kubelet does. */
async function compressRotated(dir: string, live: string, rotatedNow: string, keep: number): Promise<void> {
  // The files rotated before this rotation: their names' times are earlier (later rotations may
  // have renamed more by the time this runs; they are theirs to handle).
  const rotated = (await readdir(dir))
    .filter((name) => name.startsWith(`${live}.`) && !name.endsWith(".tmp") && name.slice(0, rotatedNow.length) < rotatedNow)
    .sort();
  const excess = Math.max(0, rotated.length - keep);
  for (const name of rotated.slice(0, excess)) await rm(join(dir, name), { force: true });
  for (const name of rotated.slice(excess)) {
    if (name.endsWith(".gz")) continue;
    const path = join(dir, name);
    // A restarted container's older attempts go meanwhile (logOf): nothing is left to compress.
    const text = await readFile(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (text === undefined) continue;
    // As the kubelet does: gzip into <f>.tmp, rename it to <f>.gz, remove <f>.
    await writeFile(`${path}.tmp`, await gzipAsync(text), { mode: 0o644 });
    await rename(`${path}.tmp`, `${path}.gz`);
    await rm(path, { force: true });
  }
}

const gzipAsync = promisify(gzip);

/** containerd opens with O_CREATE|O_APPEND, mode 0640: a file left by an earlier run is appended to. */
function openLog(dir: string, restart: number): number {
  return openSync(join(dir, `${restart}.log`), "a", 0o640);
}

function nextMultiple(ms: number, step: number): number {
  return Math.floor(ms / step) * step + step;
}

/**
 * The CRI records of one log line: `P` records of 16384 bytes while more follows, then `F`. Text
 * for a line that fits one record (joined and encoded once per file and batch); bytes for a cut
 * one, whose cut may split a character.
 */
function criLines(record: ReadableLogRecord, stamp: TimeStamp): string | Buffer {
  const time = stamp.format(record.hrTime[0], record.hrTime[1]);
  const stream = record.attributes["log.iostream"] === "stdout" ? "stdout" : "stderr";
  const body = String(record.body ?? "");
  // A UTF-16 unit is at most 3 bytes: most lines are short enough to need no count.
  if (body.length * 3 <= MAX_CONTAINER_LOG_LINE_BYTES || Buffer.byteLength(body) <= MAX_CONTAINER_LOG_LINE_BYTES)
    return `${time} ${stream} F ${body}\n`;
  const content = Buffer.from(body, "utf8");
  const parts: Buffer[] = [];
  for (let at = 0; at < content.length; at += MAX_CONTAINER_LOG_LINE_BYTES) {
    const last = at + MAX_CONTAINER_LOG_LINE_BYTES >= content.length;
    // Cut by bytes, as containerd cuts: a character may be split across two records.
    parts.push(Buffer.from(`${time} ${stream} ${last ? "F" : "P"} `), content.subarray(at, at + MAX_CONTAINER_LOG_LINE_BYTES), NEWLINE);
  }
  return Buffer.concat(parts);
}
const NEWLINE = Buffer.from("\n");

/** Lines as one write: text encoded once, with any cut line's bytes in place. */
function toBytes(lines: readonly (string | Buffer)[]): Buffer {
  if (lines.every((line) => typeof line === "string")) return Buffer.from(lines.join(""), "utf8");
  return Buffer.concat(lines.map((line) => (typeof line === "string" ? Buffer.from(line, "utf8") : line)));
}

/**
 * Go's time.RFC3339Nano in UTC (nanoseconds with trailing zeros trimmed, none when zero),
 * formatting each second's date and time once (a second holds many lines).
 */
class TimeStamp {
  private second = Number.NaN;
  private base = "";

  format(seconds: number, nanos: number): string {
    if (seconds !== this.second) {
      this.second = seconds;
      this.base = new Date(seconds * 1000).toISOString().slice(0, 19);
    }
    if (nanos === 0) return `${this.base}Z`;
    return `${this.base}.${String(nanos).padStart(9, "0").replace(/0+$/, "")}Z`;
  }
}

/** The kubelet's rotated-file suffix: "20060102-150405" of its clock (UTC here). */
function rotationStamp(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}
