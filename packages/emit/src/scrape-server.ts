/**
 * Serves every emulated target for scraping, each at its own path in the vendor's text
 * format, plus a Prometheus HTTP service-discovery endpoint listing them all, so one scrape
 * config (a Prometheus server's or a collector's prometheus receiver's) scrapes the whole
 * cluster. Discovery gives each target its emulated `job` and `instance`, which Prometheus
 * keeps (it only fills those labels in when discovery leaves them out), and, where the
 * exporter's install is pinned, the `__meta_kubernetes_*` labels Kubernetes discovery would
 * attach: a scrape config can then relabel as a ServiceMonitor does (they are dropped otherwise).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type ScrapeTarget, seriesOf, type TargetSamples } from "@gpusynth/constructs";
import { expositionChunks, LINES_PER_CHUNK } from "./exposition.js";
import { closeNow, createTimedServer, HTTP_TIMEOUTS, type HttpTimeouts, listenGuarded, originTarget } from "./http-guard.js";
import { discoveryLabels, targetKey } from "./receiver.js";

export const SD_PATH = "/sd";
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * The path a target is served at: /targets/<job>/<host>:<port><its exporter's path> (its key),
 * so /targets/<job>/<host>:<port>/metrics for most. Not percent-encoded: job names and hosts are
 * DNS names or IPv4 addresses, paths are validated URL paths, and Prometheus escapes a `%` in
 * __metrics_path__ again.
 */
export function targetPath(key: string): string {
  return `/targets/${key}`;
}

/** A target as the server serves it: its address, and its exposition, rendered when a scraper asks. */
export interface ServedTarget {
  readonly key: string;
  readonly target: ScrapeTarget;
  /** The text format, in chunks written one after the other (expositionChunks); undefined when the target has gone since it was published (404). */
  readonly exposition: () => readonly string[] | undefined | Promise<readonly string[] | undefined>;
}

export class ScrapeServer {
  private server: Server | undefined;
  private byPath = new Map<string, ServedTarget>();

  constructor(
    private readonly timeouts: HttpTimeouts = HTTP_TIMEOUTS,
    /** Lines per chunk of a target's exposition (LINES_PER_CHUNK): a test makes it small to serve many. */
    private readonly linesPerChunk = LINES_PER_CHUNK,
  ) {}

  /** Replaces what every target exposes; targets not in `collected` are down (404). */
  update(collected: readonly TargetSamples[]): void {
    this.publish(
      collected.map((listed) => ({
        key: targetKey(listed.target),
        target: listed.target,
        exposition: () => expositionChunks(seriesOf(listed), this.linesPerChunk),
      })),
    );
  }

  /** Replaces the served targets with these, whose expositions may be rendered elsewhere (a worker thread). */
  publish(targets: readonly ServedTarget[]): void {
    this.byPath = new Map(targets.map((t) => [targetPath(t.key), t]));
  }

  async listen(host: string, port: number): Promise<AddressInfo> {
    // Nothing in answer() is expected to fail; if something does (or a worker thread cannot render
    // a target), the scraper gets a bare 500 rather than the process a crash or the client an
    // internal message.
    const failed = (res: ServerResponse) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end("internal error\n");
    };
    const server = createTimedServer((req, res) => {
      try {
        this.answer(req, res)?.catch(() => failed(res));
      } catch {
        failed(res);
      }
    }, this.timeouts);
    this.server = server;
    return listenGuarded(server, host, port);
  }

  private answer(req: IncomingMessage, res: ServerResponse): void | Promise<void> {
    const target = originTarget(req.url);
    if (target === undefined) {
      res
        .writeHead(400, { "content-type": "text/plain" })
        .end(`expected a request target in origin form, such as ${SD_PATH}, with well-formed percent-escapes\n`);
      return;
    }
    // HEAD too: Node sends a GET's headers without its body.
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (target.path === SD_PATH) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(this.discovery()));
      return;
    }
    const chunks = this.byPath.get(target.path)?.exposition();
    if (chunks instanceof Promise) return chunks.then((c) => respond(res, target.path, c));
    respond(res, target.path, chunks);
  }

  /** Prometheus HTTP SD: one target group per emulated target. */
  discovery(): Array<{ targets: string[]; labels: Record<string, string> }> {
    const address = this.server?.address() as AddressInfo | undefined;
    const self = address === undefined ? "" : `${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
    return [...this.byPath.values()].map(({ key, target }) => ({
      targets: [self],
      labels: {
        ...discoveryLabels(target),
        __metrics_path__: targetPath(key),
      },
    }));
  }

  async close(): Promise<void> {
    if (this.server !== undefined) await closeNow(this.server);
  }
}

function respond(res: ServerResponse, path: string, chunks: readonly string[] | undefined): void {
  if (chunks === undefined) {
    res.writeHead(404, { "content-type": "text/plain" }).end(`no such target: ${path}\nsee ${SD_PATH} for the list\n`);
    return;
  }
  res.writeHead(200, { "content-type": CONTENT_TYPE });
  // One chunk (nearly every target) is the whole body, sent with its length; more go out chunked.
  if (chunks.length === 1) res.end(chunks[0]);
  else {
    for (const chunk of chunks) res.write(chunk);
    res.end();
  }
}
