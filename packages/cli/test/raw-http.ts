/**
 * HTTP/1.1 over a bare TCP socket, for tests that must send exact bytes (malformed request
 * lines, NUL and non-ASCII bytes, pipelined or cut-short requests) that fetch would refuse or
 * repair, and read back exactly what the server answered.
 */
import { connect } from "node:net";

export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface Exchange {
  /** Final responses (1xx interim ones skipped), in order. */
  readonly responses: RawResponse[];
  /** Bytes after the last complete response: anything here that is not a response's start is garbage. */
  readonly rest: string;
  /** Whether the server closed the connection (FIN or reset) before the exchange ended. */
  readonly closedByServer: boolean;
  /** Whether the time ran out first (the server neither answered all nor closed). */
  readonly timedOut: boolean;
}

const STATUS_LINE = /^HTTP\/1\.[01] (\d{3}) [^\r\n]*\r\n/;

/**
 * Splits what a server sent into complete responses, framed by Content-Length, chunked transfer
 * coding or (neither: an HTTP/1.0 answer) the server closing; `heads` says which requests were
 * HEAD (their responses have no body).
 */
export function parseResponses(raw: string, heads: readonly boolean[] = [], closed = false): { responses: RawResponse[]; rest: string } {
  const responses: RawResponse[] = [];
  let rest = raw;
  for (;;) {
    const line = STATUS_LINE.exec(rest);
    const end = rest.indexOf("\r\n\r\n");
    if (line === null || end < 0) return { responses, rest };
    const status = Number(line[1]);
    const headers = Object.fromEntries(
      rest
        .slice(line[0].length, end)
        .split("\r\n")
        .filter((h) => h !== "")
        .map((h) => [h.slice(0, h.indexOf(":")).toLowerCase(), h.slice(h.indexOf(":") + 1).trim()]),
    );
    const afterHead = rest.slice(end + 4);
    if (status < 200) {
      rest = afterHead;
      continue;
    }
    const body = heads[responses.length] === true || status === 204 || status === 304 ? "" : bodyOf(afterHead, headers, closed);
    if (body === undefined) return { responses, rest };
    responses.push({ status, headers, body: decodeChunks(body, headers) });
    rest = afterHead.slice(body.length);
  }
}

/** The raw body text at the start of `text`, or undefined while it is incomplete. */
function bodyOf(text: string, headers: Record<string, string>, closed: boolean): string | undefined {
  if (headers["transfer-encoding"] === "chunked") {
    const last = text.indexOf("\r\n0\r\n\r\n");
    if (text.startsWith("0\r\n\r\n")) return text.slice(0, 5);
    return last < 0 ? undefined : text.slice(0, last + 7);
  }
  if (headers["content-length"] === undefined) return closed ? text : undefined;
  const length = Number(headers["content-length"]);
  return text.length < length ? undefined : text.slice(0, length);
}

function decodeChunks(body: string, headers: Record<string, string>): string {
  if (headers["transfer-encoding"] !== "chunked") return body;
  let out = "";
  let rest = body;
  for (;;) {
    const eol = rest.indexOf("\r\n");
    const size = Number.parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 4 + size);
  }
}

export interface ExchangeOptions {
  /** Final responses to wait for before hanging up ourselves (default 1). */
  readonly expect?: number;
  /** Which requests are HEAD, in order. */
  readonly heads?: readonly boolean[];
  /** Hang up right after writing, without waiting for anything: a client that goes mid-request. */
  readonly hangUp?: boolean;
  /** How long to wait for the expected responses or the server closing. */
  readonly timeoutMs?: number;
}

/**
 * Writes `request` on a fresh connection to 127.0.0.1:`port` and collects what comes back until
 * the expected responses are complete, the server closes, or the time is up (then whatever was
 * read is returned, and the caller decides whether an unanswered request is a failure).
 */
export function exchange(port: number, request: string | Buffer, options: ExchangeOptions = {}): Promise<Exchange> {
  const expected = options.expect ?? 1;
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let raw = "";
    let settled = false;
    const finish = (closedByServer: boolean, timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponses(raw, options.heads, closedByServer), closedByServer, timedOut });
    };
    const timer = setTimeout(() => finish(false, true), options.timeoutMs ?? 5000);
    socket.on("data", (chunk: Buffer) => {
      raw += chunk.toString("latin1");
      if (parseResponses(raw, options.heads).responses.length >= expected) finish(false, false);
    });
    // A reset while we still write (the server refused a huge request) is the server closing too.
    socket.on("error", () => finish(true, false));
    socket.on("end", () => finish(true, false));
    socket.write(typeof request === "string" ? Buffer.from(request, "latin1") : request, () => {
      if (options.hangUp === true) finish(false, false);
    });
  });
}

/** A small, fast, seeded PRNG (mulberry32): the same seed gives the same requests. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
