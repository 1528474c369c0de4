/**
 * Serves every emulated target for scraping, each at its own path in the vendor's text
 * format, plus a Prometheus HTTP service-discovery endpoint listing them all, so one scrape
 * config (a Prometheus server's or a collector's prometheus receiver's) scrapes the whole
 * cluster. Discovery gives each target its emulated `job` and `instance`, which Prometheus
 * keeps (it only fills those labels in when discovery leaves them out).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TargetSamples } from "@gpusynth/constructs";
import { exposition } from "./exposition.js";
import { targetKey } from "./receiver.js";

export const SD_PATH = "/sd";
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * The path a target is served at: /targets/<job>/<host>:<port>/metrics. Not percent-encoded:
 * job names and hosts are DNS names or IPv4 addresses, and Prometheus escapes a `%` in
 * __metrics_path__ again.
 */
export function targetPath(key: string): string {
  return `/targets/${key}/metrics`;
}

export class ScrapeServer {
  private server: Server | undefined;
  private latest = new Map<string, TargetSamples>();
  private byPath = new Map<string, TargetSamples>();

  /** Replaces what every target exposes; targets not in `collected` are down (404). */
  update(collected: readonly TargetSamples[]): void {
    this.latest = new Map(collected.map((t) => [targetKey(t.target), t]));
    this.byPath = new Map([...this.latest.entries()].map(([key, t]) => [targetPath(key), t]));
  }

  async listen(host: string, port: number): Promise<AddressInfo> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (req.method !== "GET") {
        res.writeHead(405).end();
        return;
      }
      if (url.pathname === SD_PATH) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(this.discovery()));
        return;
      }
      const target = this.byPath.get(url.pathname);
      if (target === undefined) {
        res.writeHead(404, { "content-type": "text/plain" }).end(`no such target: ${url.pathname}\nsee ${SD_PATH} for the list\n`);
        return;
      }
      res.writeHead(200, { "content-type": CONTENT_TYPE }).end(exposition(target.samples));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    return server.address() as AddressInfo;
  }

  /** Prometheus HTTP SD: one target group per emulated target. */
  discovery(): Array<{ targets: string[]; labels: Record<string, string> }> {
    const address = this.server?.address() as AddressInfo | undefined;
    const self = address === undefined ? "" : `${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
    return [...this.latest.entries()].map(([key, { target }]) => ({
      targets: [self],
      labels: { job: target.job, instance: `${target.host}:${target.port}`, __metrics_path__: targetPath(key) },
    }));
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
