/**
 * What both HTTP servers of a live run (scrape targets, control-plane API) do with requests that
 * are not what they serve: read a request target without ever throwing, and answer what Node's
 * parser rejects with a 4xx instead of a reset. One hostile request must never end the run.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";

/** A path with a `%` not followed by two hex digits: RFC 3986 has no such thing. */
const MALFORMED_ESCAPE = /%(?![0-9a-f]{2})/i;
/** How long a connection whose request could not be parsed stays open for its client to read the 400. */
const CLIENT_ERROR_LINGER_MS = 500;

/** The path and query of a request target in origin form (RFC 9112 §3.2.1). */
export interface OriginTarget {
  readonly path: string;
  readonly query: URLSearchParams;
}

/**
 * Reads a request target without throwing: undefined unless it is in origin form with
 * well-formed percent-escapes. These servers are no proxy, so absolute form, asterisk form
 * (`OPTIONS *`) and anything else not starting with `/` are bad requests. The target is read
 * under a fixed origin rather than as a reference relative to one: `//a:99999/` is a path, but
 * `new URL("//a:99999/", base)` reads it as a host and port, and throws.
 */
export function originTarget(target: string | undefined): OriginTarget | undefined {
  if (target === undefined || !target.startsWith("/") || MALFORMED_ESCAPE.test(target)) return undefined;
  try {
    const url = new URL(`http://origin${target}`);
    return { path: url.pathname, query: url.searchParams };
  } catch {
    return undefined;
  }
}

const CLIENT_ERRORS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: "431 Request Header Fields Too Large",
  ERR_HTTP_REQUEST_TIMEOUT: "408 Request Timeout",
};

/**
 * Answers a request Node's HTTP parser rejected (a malformed request line or header, an unknown
 * method, headers too large, too slow) with its 4xx and closes the connection: after a parse
 * error the rest of the stream cannot be framed into requests. Node's default does much the same
 * but destroys the socket straight after writing, which can reset the connection before the
 * client reads the answer.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  refuse(socket, CLIENT_ERRORS[error.code ?? ""] ?? "400 Bad Request");
}

/** A CONNECT (authority form): these servers are no proxy, and Node would drop the connection without a word. */
export function answerConnect(_req: IncomingMessage, socket: Duplex): void {
  refuse(socket, "400 Bad Request");
}

function refuse(socket: Duplex, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
}

/**
 * How long a connection may take over what it owes, as a scrape target or an API behind a load
 * balancer would allow: a scraper sends its request as soon as it connects and its keep-alive
 * reconnects are cheap, so seconds are plenty, and a client that connects and sends nothing (or
 * stalls in its body) cannot hold a socket for Node's defaults of a minute and five minutes.
 */
export interface HttpTimeouts {
  /** From the connection (or the end of the previous response) to the end of the request's headers: 408 after. */
  readonly headersMs: number;
  /** From the connection to the end of the whole request, body included: 408 after. */
  readonly requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveMs: number;
  /** How often connections are checked against the first two (they expire at most this late). */
  readonly checkEveryMs: number;
}

export const HTTP_TIMEOUTS: HttpTimeouts = { headersMs: 5_000, requestMs: 10_000, keepAliveMs: 5_000, checkEveryMs: 1_000 };

/** An HTTP server answering with `listener`, held to `timeouts`. */
export function createTimedServer(listener: RequestListener, timeouts: HttpTimeouts): Server {
  const server = createServer(
    { headersTimeout: timeouts.headersMs, requestTimeout: timeouts.requestMs, connectionsCheckingInterval: timeouts.checkEveryMs },
    listener,
  );
  server.keepAliveTimeout = timeouts.keepAliveMs;
  return server;
}

/** Starts `server` on host:port with the guards above for what Node's parser rejects. */
export async function listenGuarded(server: Server, host: string, port: number): Promise<AddressInfo> {
  server.on("clientError", answerClientError);
  server.on("connect", answerConnect);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server.address() as AddressInfo;
}

/** Closes `server` now: keep-alive and half-open connections would otherwise hold the close until their clients leave. */
export async function closeNow(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
