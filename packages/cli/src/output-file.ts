/**
 * Files a run writes while it runs (--otlp-json, --otlp-json-logs), never left half-written
 * without a word: a regular file (or a new path) is written under a temporary name in its own
 * directory and renamed over the target only when the run succeeds, and a failed write removes
 * the temporary file. Devices, FIFOs and /dev/stdout cannot be renamed over, so they are written
 * directly. A failed write is an OutputError naming the flag, the path and the cause (exit 1); a
 * reader that went away (EPIPE, `… | head`) is a quiet OutputError: the run just ends.
 *
 * A path ending in `.gz` is written gzip-compressed: lines are gathered into blocks of about
 * GZIP_BLOCK_BYTES and each block is one gzip member. A file of several members is one gzip
 * file (RFC 1952 §2.2): gunzip, zcat and Node's zlib read it whole.
 */
import { randomBytes } from "node:crypto";
import {
  accessSync,
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  openSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { UsageError } from "./usage.js";

/** Paths that name the process's own output streams. */
const STREAMS: ReadonlyMap<string, number> = new Map([
  ["/dev/stdout", 1],
  ["/dev/fd/1", 1],
  ["/proc/self/fd/1", 1],
  ["/dev/stderr", 2],
  ["/dev/fd/2", 2],
  ["/proc/self/fd/2", 2],
]);

/** An output that failed during a run: exit 1 with the message, or quietly when the reader left. */
export class OutputError extends Error {
  override readonly name = "OutputError";
  constructor(
    message: string,
    /** The reader went away (EPIPE): nothing to report. */
    readonly quiet = false,
  ) {
    super(message);
  }
}

const CAUSES: Readonly<Record<string, string>> = {
  EACCES: "permission denied",
  EDQUOT: "disk quota exceeded",
  EEXIST: "file exists",
  EFBIG: "file too large",
  EIO: "input/output error",
  EISDIR: "is a directory",
  ENOENT: "no such file or directory",
  ENOSPC: "no space left on device",
  ENOTDIR: "not a directory",
  ENXIO: "no such device or address",
  EPERM: "operation not permitted",
  EPIPE: "broken pipe",
  EROFS: "read-only file system",
};

/** "ENOSPC (no space left on device)": the errno code a user can search for, and its meaning. */
export function describeCause(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined) return cause instanceof Error ? cause.message : String(cause);
  const meaning = CAUSES[code];
  return meaning === undefined ? code : `${code} (${meaning})`;
}

/** Writes bytes at an offset and says how many it wrote (fs.writeSync's contract). */
export type WriteBytes = (fd: number, buffer: Uint8Array, offset: number, length: number) => number;

const writeBytes: WriteBytes = (fd, buffer, offset, length) => writeSync(fd, buffer, offset, length);

/** Uncompressed bytes gathered before a gzip member is written: a good ratio, bounded memory. */
const GZIP_BLOCK_BYTES = 4 * 1024 * 1024;

/** Writes one file; the writer is injectable so tests can make a regular file's write fail. */
export class OutputFile {
  private fd: number | undefined;
  /** Committed: the temporary file is the target now, and discard leaves it alone. */
  private committed = false;
  /** For a .gz path: the lines not yet compressed, and their size. */
  private readonly pending: Buffer[] | undefined;
  private pendingBytes = 0;

  private constructor(
    private readonly flag: string,
    readonly path: string,
    fd: number,
    /** The temporary file renamed over `target` on commit; undefined when written directly. */
    private readonly temporary: string | undefined,
    private readonly target: string,
    private readonly write: WriteBytes,
    /** False for the process's own stdout and stderr, which stay open. */
    private readonly owned = true,
  ) {
    this.fd = fd;
    // A .gz name asks for gzip, as gzip and zcat name files.
    this.pending = path.endsWith(".gz") ? [] : undefined;
  }

  /** Opens the output --<flag> names; a path that cannot be opened is the user's to fix (exit 2). */
  static open(flag: string, path: string, write: WriteBytes = writeBytes): OutputFile {
    if (path === "") throw new UsageError(`--${flag}: expected a file to write, found ""`);
    const stat = statOrUndefined(path);
    if (stat?.isDirectory()) throw new UsageError(`--${flag}: cannot write "${path}": it is a directory`);
    // The process's own streams are written through its descriptors: opening /dev/stdout anew
    // fails when stdout is a socket (ENXIO), and would truncate a shell's `>> file`.
    const stream = STREAMS.get(resolve(path));
    if (stream !== undefined) return new OutputFile(flag, path, stream, undefined, path, write, false);
    // Other /dev and /proc paths are written as they are, even when they lead to a regular file.
    const special = /^\/(dev|proc)\//.test(resolve(path));
    if (special || (stat !== undefined && !stat.isFile())) {
      try {
        return new OutputFile(flag, path, openSync(path, "a"), undefined, path, write);
      } catch (cause) {
        throw new UsageError(`--${flag}: cannot write "${path}": ${describeCause(cause)}`);
      }
    }
    // Rename over the real file, so a symbolic link stays a link to the new content.
    const target = stat === undefined ? resolve(path) : realpathSync(path);
    if (stat !== undefined) {
      try {
        accessSync(target, constants.W_OK); // a read-only file stays read-only, as with a plain open
      } catch (cause) {
        throw new UsageError(`--${flag}: cannot write "${path}": ${describeCause(cause)}`);
      }
    }
    const temporary = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
    let fd: number;
    try {
      fd = openSync(temporary, "wx");
    } catch (cause) {
      throw new UsageError(`--${flag}: cannot write "${path}": cannot create a file in ${dirname(target)}: ${describeCause(cause)}`);
    }
    if (stat !== undefined) {
      try {
        fchmodSync(fd, stat.mode & 0o7777); // keep the replaced file's permissions
      } catch {
        // Best effort: the content matters more than the mode.
      }
    }
    return new OutputFile(flag, path, fd, temporary, target, write);
  }

  /** Writes all of `text` (compressed for a .gz path) or throws an OutputError (and the temporary file is gone). */
  readonly writeLine = (text: string): void => {
    if (this.fd === undefined) throw new OutputError(`--${this.flag}: cannot write ${this.path}: the file is already closed`);
    const bytes = Buffer.from(text, "utf8");
    if (this.pending === undefined) {
      this.writeAll(bytes);
      return;
    }
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes >= GZIP_BLOCK_BYTES) this.flushGzip();
  };

  /** Compresses the gathered lines into one gzip member and writes it. */
  private flushGzip(): void {
    if (this.pending === undefined || this.pendingBytes === 0) return;
    const block = gzipSync(Buffer.concat(this.pending, this.pendingBytes));
    this.pending.length = 0;
    this.pendingBytes = 0;
    this.writeAll(block);
  }

  private writeAll(bytes: Buffer): void {
    const fd = this.fd;
    if (fd === undefined) throw new OutputError(`--${this.flag}: cannot write ${this.path}: the file is already closed`);
    let offset = 0;
    try {
      while (offset < bytes.length) {
        try {
          offset += this.write(fd, bytes, offset, bytes.length - offset);
        } catch (cause) {
          // A non-blocking pipe that is full: wait for the reader by trying again.
          if ((cause as NodeJS.ErrnoException).code !== "EAGAIN") throw cause;
        }
      }
    } catch (cause) {
      this.discard();
      throw this.failure(cause);
    }
  }

  /** Makes the output final: flushed, closed and (for a regular file) renamed into place. */
  commit(): void {
    if (this.fd === undefined) return;
    this.flushGzip(); // a failed write has discarded the file and thrown
    const fd = this.fd;
    try {
      if (this.temporary !== undefined) fsyncSync(fd); // a full disk may only show here
      this.fd = undefined;
      if (this.owned) closeSync(fd);
      if (this.temporary !== undefined) renameSync(this.temporary, this.target);
      this.committed = true;
    } catch (cause) {
      this.discard();
      throw this.failure(cause);
    }
  }

  /** Abandons the output: closed, and the temporary file removed (the target is untouched). */
  discard(): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined && this.owned) {
      try {
        closeSync(fd);
      } catch {
        // Already failing: the first error is the one reported.
      }
    }
    if (this.temporary !== undefined && !this.committed) {
      try {
        unlinkSync(this.temporary);
      } catch {
        // Gone already.
      }
    }
  }

  private failure(cause: unknown): OutputError {
    const code = (cause as NodeJS.ErrnoException).code;
    return new OutputError(`--${this.flag}: cannot write ${this.path}: ${describeCause(cause)}`, code === "EPIPE");
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** The file a path names, for telling whether two flags name the same one. */
export function sameFile(a: string, b: string): boolean {
  const sa = statOrUndefined(a);
  const sb = statOrUndefined(b);
  if (sa !== undefined && sb !== undefined) return sa.dev === sb.dev && sa.ino === sb.ino;
  return realOrResolved(a) === realOrResolved(b);
}

/** The real path of a file that may not exist yet: its directory's real path and its name. */
function realOrResolved(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    try {
      return join(realpathSync(dirname(absolute)), basename(absolute));
    } catch {
      return absolute;
    }
  }
}
