/**
 * Both servers of a live run hold a connection only as long as a scraper or an API client needs:
 * one that connects and sends nothing, sends half its headers, stalls in its body, or idles
 * after a response is closed once its timeout has passed (408 where a request was under way),
 * instead of after Node's defaults of a minute and more. Run here with timeouts of a few hundred
 * milliseconds; the shipped values are seconds (http-guard.ts, docs/emission.md).
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneServer } from "../src/api-server/server.js";
import { HTTP_TIMEOUTS, type HttpTimeouts } from "../src/http-guard.js";
import { ScrapeServer } from "../src/scrape-server.js";

const SHORT: HttpTimeouts = { headersMs: 300, requestMs: 600, keepAliveMs: 300, checkEveryMs: 50 };
/** Time allowed past a timeout for the check that expires it and the close to arrive. */
const SLACK_MS = 700;

/** Opens a connection, writes `sent`, and resolves when the server closes it: with what it answered and after how long. */
function heldFor(port: number, sent: string): Promise<{ ms: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket: Socket = connect(port, "127.0.0.1", () => socket.write(sent));
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve({ ms: performance.now() - started, answer }));
  });
}

describe.each([
  ["the scrape server", () => new ScrapeServer(SHORT)],
  ["the control-plane API", () => new ControlPlaneServer({ token: "dev-token-0123456789" }, SHORT)],
])("%s's timeouts", (_, create) => {
  const server = create();
  let port = 0;
  beforeAll(async () => {
    port = (await server.listen("127.0.0.1", 0)).port;
  });
  afterAll(() => server.close());

  it("closes connections that send nothing once the headers timeout has passed, several at once", async () => {
    const held = await Promise.all([1, 2, 3].map(() => heldFor(port, "")));
    for (const { ms } of held) {
      expect(ms).toBeGreaterThanOrEqual(SHORT.headersMs - 50);
      expect(ms).toBeLessThan(SHORT.headersMs + SLACK_MS);
    }
  });

  it("answers 408 to a request whose headers never end", async () => {
    const { ms, answer } = await heldFor(port, "GET /sd HTTP/1.1\r\nHost: x\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(ms).toBeLessThan(SHORT.headersMs + SLACK_MS);
  });

  it("closes a request whose body stalls once the request timeout has passed", async () => {
    const { ms } = await heldFor(
      port,
      "POST /api/v1/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    expect(ms).toBeLessThan(SHORT.requestMs + SLACK_MS);
  });

  it("closes an idle keep-alive connection after its response", async () => {
    const { ms, answer } = await heldFor(port, "GET /nothing-here HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 [45]\d\d /);
    // Node 20 closes an idle keep-alive socket a second after keepAliveTimeout (its buffer for
    // responses in flight).
    expect(ms).toBeLessThan(SHORT.keepAliveMs + 1_000 + SLACK_MS);
  });
});

describe("the shipped timeouts", () => {
  it("are seconds, not Node's minutes", () => {
    for (const [name, ms] of Object.entries(HTTP_TIMEOUTS)) expect(ms, name).toBeLessThanOrEqual(10_000);
  });
});
