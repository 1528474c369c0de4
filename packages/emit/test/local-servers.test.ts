/**
 * The servers the tests and scripts start take ports another process may take first
 * (scripts/local-servers.mjs, startServer): a real
 * Prometheus whose port is taken starts again on another, and one that cannot start at all says
 * why, with its log.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startServer } from "../../../scripts/local-servers.mjs";
import { goServerEnv } from "./go-server-env.js";
import { prometheusBinary } from "./prometheus-server.js";

const dir = mkdtempSync(join(tmpdir(), "gpusynth-local-server-"));
writeFileSync(join(dir, "prometheus.yml"), "global: { scrape_interval: 1m }\n");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const prometheus = (port: number, config = join(dir, "prometheus.yml")) => [
  `--config.file=${config}`,
  `--storage.tsdb.path=${join(dir, `data-${port}`)}`,
  `--web.listen-address=127.0.0.1:${port}`,
];

describe.skipIf(prometheusBinary === "")("a test's server on a free port", () => {
  it("starts again on another port when another process took the one it was given", async () => {
    // Someone else's listener on the port of the first attempt.
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const takenPort = (taken.address() as { port: number }).port;
    const given: number[] = [];
    const server = await startServer({
      name: "Prometheus",
      command: prometheusBinary,
      ports: ["web"],
      args: ({ web }) => {
        given.push(web);
        return prometheus(given.length === 1 ? takenPort : web);
      },
      env: () => goServerEnv(),
      ready: /Server is ready to receive web requests/,
    });
    try {
      expect(given).toHaveLength(2);
      expect(server.log()).not.toMatch(/address already in use/);
      const ready = await fetch(`http://127.0.0.1:${server.ports.web}/-/ready`);
      expect(ready.status).toBe(200);
    } finally {
      server.child.kill("SIGKILL");
      taken.close();
    }
  });

  it("says why a server that cannot start did not, with its log", async () => {
    writeFileSync(join(dir, "bad.yml"), "global: { scrape_interval: sometimes }\n");
    await expect(
      startServer({
        name: "Prometheus",
        command: prometheusBinary,
        ports: ["web"],
        args: ({ web }) => prometheus(web, join(dir, "bad.yml")),
        ready: /Server is ready to receive web requests/,
      }),
    ).rejects.toThrow(/Prometheus exited \(attempt 1\):\n[\s\S]*sometimes/);
  });
});
