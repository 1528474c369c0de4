/**
 * A live run's two HTTP servers (the scrape targets and the control-plane API) face hostile
 * clients, as anything listening on a port does: malformed request lines and targets, bytes no
 * client should send, wrong credentials of every length, broken and oversized bodies, requests
 * cut short, and a few hundred seeded random requests. Whatever comes in, each request gets a
 * well-formed 4xx (never a 5xx, never an internal message or a secret) or the connection is
 * closed, the process lives on, serves the next request, and prints no stack trace.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureStopped, type LiveProcess, startLive } from "./live-process.js";
import { type Exchange, exchange, prng } from "./raw-http.js";

const TOKEN = "fuzz-token-0123456789abcdef";
const CLIENT = { id: "fuzz-client", secret: "fuzz-secret-0123456789" };
/** GPUSYNTH_FUZZ_SEED replays or varies the random requests; the default keeps runs comparable. */
const SEED = Number(process.env.GPUSYNTH_FUZZ_SEED ?? 2024_0624);
const RANDOM_REQUESTS = 300;
const CONCURRENCY = 8;
/** What a server's answer must never carry: a runtime error's name or a stack frame. */
const INTERNAL = /\b(TypeError|RangeError|URIError|SyntaxError|ReferenceError)\b|\n\s+at |file:\/\//;

let live: LiveProcess;
let scrapePort = 0;
let apiPort = 0;
let clusterId = "";

beforeAll(async () => {
  live = startLive(["--speed", "60", "--interval", "1s", "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0", "blueprints/lab.yaml"], {
    GPUSYNTH_API_TOKEN: TOKEN,
    GPUSYNTH_API_CLIENT_ID: CLIENT.id,
    GPUSYNTH_API_CLIENT_SECRET: CLIENT.secret,
  });
  // The two ports the run announces on stderr (its other wording is not relied on).
  scrapePort = Number((await live.waitFor(/scrape targets listed at http:\/\/127\.0\.0\.1:(\d+)\/sd/))[1]);
  apiPort = Number((await live.waitFor(/control-plane API \(2\.24\) at http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/))[1]);
  const clusters = await untilObserved();
  clusterId = (clusters[0] as { uuid: string }).uuid;
}, 20_000);

afterAll(async () => {
  if (!alive()) return;
  const killer = setTimeout(() => ensureStopped(live), 5000);
  await live.stop("SIGTERM");
  clearTimeout(killer);
});

/** The API answers 503 until the simulation's first observation. */
async function untilObserved(): Promise<unknown[]> {
  for (;;) {
    const answer = await fetch(`http://127.0.0.1:${apiPort}/api/v1/clusters`, { headers: { authorization: `Bearer ${TOKEN}` } });
    if (answer.status !== 503) return (await answer.json()) as unknown[];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---- requests as bytes ----

type Headers = ReadonlyArray<readonly [string, string]>;
const HOST: Headers = [["Host", "127.0.0.1"]];
const AUTH: Headers = [...HOST, ["Authorization", `Bearer ${TOKEN}`]];

/** A request exactly as written: latin1, so each character is one byte on the wire. */
function request(method: string, target: string, headers: Headers = HOST, body = "", version = "HTTP/1.1"): string {
  const length = body === "" ? [] : [`Content-Length: ${Buffer.byteLength(body, "latin1")}`];
  const lines = [`${method} ${target} ${version}`, ...headers.map(([k, v]) => `${k}: ${v}`), ...length];
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}
const get = (target: string, headers: Headers = HOST) => request("GET", target, headers);
const utf8 = (text: string) => Buffer.from(text, "utf8").toString("latin1");
const jsonHeaders: Headers = [...HOST, ["Content-Type", "application/json"]];
const postJson = (path: string, body: string) => request("POST", path, jsonHeaders, body);
const formHeaders: Headers = [...HOST, ["Content-Type", "application/x-www-form-urlencoded"]];
const postForm = (body: string) => request("POST", "/api/v2/token", formHeaders, body);
const chunked = (path: string, size: number) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${size.toString(16)}\r\n${"x".repeat(size)}\r\n0\r\n\r\n`;

/** A same-length variant of the token with one non-ASCII character, as UTF-8 bytes. */
const nonAsciiSameLength = utf8(`${TOKEN.slice(0, -1)}é`);

// ---- judging what came back ----

const alive = () => live.child.exitCode === null && live.child.signalCode === null;

/**
 * What every answer must be: the expected responses, or the server closing the connection;
 * a well-formed status line under 500 each; no internal message or secret in any body; no
 * bytes after the last response that do not start another.
 */
function judge(what: string, result: Exchange, expected: number, grants = false): number[] {
  const statuses = result.responses.map((r) => r.status);
  const context = `${what}: ${JSON.stringify({ statuses, rest: result.rest.slice(0, 200), closed: result.closedByServer })}`;
  expect(result.timedOut && statuses.length < expected, `${context}: neither answered nor closed`).toBe(false);
  expect(result.rest === "" || /^HTTP\/1\.[01] \d{3} /.test(result.rest), `${context}: not an HTTP response`).toBe(true);
  for (const { status, body } of result.responses) {
    expect(status, context).toBeGreaterThanOrEqual(100);
    expect(status, context).toBeLessThan(500);
    expect(body, context).not.toMatch(INTERNAL);
    if (!grants) expect(body, context).not.toContain(TOKEN);
    expect(body, context).not.toContain(CLIENT.secret);
  }
  return statuses;
}

/** After every batch: the process is alive, both servers answer a normal request, no stack trace was printed. */
async function stillServing(): Promise<void> {
  expect(alive(), live.stderr()).toBe(true);
  expect((await fetch(`http://127.0.0.1:${scrapePort}/sd`)).status).toBe(200);
  const clusters = await fetch(`http://127.0.0.1:${apiPort}/api/v1/clusters`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(clusters.status).toBe(200);
  expect(live.stderr()).not.toContain("\n    at ");
}

interface Case {
  readonly what: string;
  readonly send: string | (() => string);
  /** The statuses of the responses, in order ([] for a request we hang up on). */
  readonly statuses: readonly number[];
  readonly heads?: readonly boolean[];
  readonly grants?: boolean;
  /** Hang up right after sending (half a request). */
  readonly hangUp?: boolean;
  readonly allow?: string;
}

async function run(port: () => number, c: Case): Promise<void> {
  const bytes = typeof c.send === "function" ? c.send() : c.send;
  const result = await exchange(port(), bytes, {
    expect: Math.max(c.statuses.length, 1),
    heads: c.heads ?? [],
    hangUp: c.hangUp ?? false,
  });
  // A request we hang up on has no answer to judge: what matters is that the server lives on.
  if (c.hangUp !== true) expect(judge(c.what, result, c.statuses.length, c.grants)).toEqual(c.statuses);
  if (c.allow !== undefined) expect(result.responses[0]?.headers.allow).toBe(c.allow);
  await stillServing();
}

// Cases every server meets at the HTTP layer, before any route is looked at.
const transport: Case[] = [
  { what: "a target that is not a path", send: get("sd"), statuses: [400] },
  { what: "absolute form", send: get("http://127.0.0.1/sd"), statuses: [400] },
  { what: "asterisk form", send: request("OPTIONS", "*"), statuses: [400] },
  { what: "CONNECT (authority form)", send: request("CONNECT", "127.0.0.1:443"), statuses: [400] },
  { what: "a NUL in the path", send: get("/sd\0"), statuses: [400] },
  { what: "a NUL in a header", send: get("/sd", [...HOST, ["X-Fuzz", "a\0b"]]), statuses: [400] },
  { what: "non-ASCII bytes in the path", send: get(utf8("/sdé")), statuses: [400] },
  { what: "a path longer than the header limit", send: get(`/${"a".repeat(20_000)}`), statuses: [431] },
  { what: "a header longer than the limit", send: get("/sd", [...HOST, ["X-Fuzz", "b".repeat(20_000)]]), statuses: [431] },
  { what: "an unknown method", send: request("FROB", "/sd"), statuses: [400] },
  { what: "a lower-case method", send: request("get", "/sd"), statuses: [400] },
  { what: "HTTP/1.1 without Host", send: "GET /sd HTTP/1.1\r\n\r\n", statuses: [400] },
  { what: "an HTTP version that does not exist", send: request("GET", "/sd", HOST, "", "HTTP/1.7"), statuses: [400] },
  { what: "the HTTP/2 preface", send: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", statuses: [400] },
  { what: "bare LF line ends", send: "GET /sd HTTP/1.1\nHost: 127.0.0.1\n\n", statuses: [400] },
  { what: "a folded header", send: "GET /sd HTTP/1.1\r\nHost: 127.0.0.1\r\n X: y\r\n\r\n", statuses: [400] },
  { what: "Content-Length that is not a number", send: get("/sd", [...HOST, ["Content-Length", "ab"]]), statuses: [400] },
  {
    what: "both Content-Length and chunked",
    send: "GET /sd HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    statuses: [400],
  },
  { what: "half a request line, then gone", send: "GET /sd HT", statuses: [], hangUp: true },
  { what: "half the headers, then gone", send: "GET /sd HTTP/1.1\r\nHost: 127.0", statuses: [], hangUp: true },
  {
    what: "half a body, then gone",
    send: "POST /api/v1/token HTTP/1.1\r\nHost: x\r\nContent-Length: 99\r\n\r\n{",
    statuses: [],
    hangUp: true,
  },
];

const scrapeCases: Case[] = [
  { what: "//", send: get("//"), statuses: [404] },
  { what: "//a:99999/", send: get("//a:99999/"), statuses: [404] },
  { what: "a malformed escape in the path", send: get("/targets/%zz/metrics"), statuses: [400] },
  { what: "a malformed escape in the query", send: get("/sd?x=%zz"), statuses: [400] },
  { what: "a lone % at the end", send: get("/sd%"), statuses: [400] },
  { what: "an unknown path", send: get("/metrics"), statuses: [404] },
  { what: "a long path under the limit", send: get(`/${"a/".repeat(3000)}`), statuses: [404] },
  { what: "POST", send: request("POST", "/sd", HOST, "x=1"), statuses: [405], allow: "GET, HEAD" },
  { what: "DELETE", send: request("DELETE", "/sd"), statuses: [405], allow: "GET, HEAD" },
  { what: "HEAD", send: request("HEAD", "/sd"), statuses: [200], heads: [true] },
  { what: "a non-ASCII header value", send: get("/sd", [...HOST, ["X-Fuzz", utf8("é\u{1F600}")]]), statuses: [200] },
  { what: "HTTP/1.0", send: "GET /sd HTTP/1.0\r\n\r\n", statuses: [200] },
  { what: "pipelined requests", send: get("/sd") + get("/nope") + get("//") + get("/%zz"), statuses: [200, 404, 404, 400] },
  { what: "an oversized body", send: () => request("POST", "/sd", HOST, "x".repeat(1 << 20)), statuses: [405] },
];

const apiCases: Case[] = [
  { what: "//", send: get("//", AUTH), statuses: [404] },
  { what: "// without the token", send: get("//"), statuses: [401] },
  { what: "//a:99999/", send: get("//a:99999/", AUTH), statuses: [404] },
  { what: "a malformed escape in a path", send: get("/api/v1/node-pools/%zz", AUTH), statuses: [400] },
  {
    what: "a malformed escape in a path parameter",
    send: () => get(`/api/v1/clusters/${clusterId}/nodepools/%zz/metrics`, AUTH),
    statuses: [400],
  },
  {
    what: "an escape that is not UTF-8 in a path parameter",
    send: () => get(`/api/v1/clusters/${clusterId}/nodepools/%C3/metrics?metricType=TOTAL_GPU`, AUTH),
    statuses: [400],
  },
  { what: "a malformed escape in the query", send: get("/api/v1/clusters?x=%zz", AUTH), statuses: [400] },
  {
    what: "an escaped % in a query parameter that names a pool",
    send: () =>
      get(
        `/api/v1/clusters/${clusterId}/metrics?metricType=TOTAL_GPU&start=2026-01-01T00:00:00Z&end=2026-01-01T00:01:00Z&nodepoolName=%25zz`,
        AUTH,
      ),
    statuses: [404],
  },
  { what: "a very long path", send: get(`/api/v1/${"x".repeat(8000)}`, AUTH), statuses: [404] },
  { what: "PUT on an endpoint", send: request("PUT", "/api/v1/clusters", AUTH, "{}"), statuses: [405], allow: "GET" },
  { what: "GET on the token endpoint", send: get("/api/v1/token"), statuses: [405], allow: "POST" },
  { what: "HTTP/1.0", send: request("GET", "/api/v1/clusters", AUTH.slice(1), "", "HTTP/1.0"), statuses: [200] },
  {
    what: "pipelined requests",
    send: get("/api/v1/clusters", AUTH) + get("/api/v1/nope", AUTH) + get("/api/v1/clusters") + get("/api/v1/%zz"),
    statuses: [200, 404, 401, 400],
  },
  // ---- bearer token ----
  { what: "no Authorization", send: get("/api/v1/nodes"), statuses: [401] },
  { what: "an empty bearer", send: get("/api/v1/nodes", [...HOST, ["Authorization", "Bearer "]]), statuses: [401] },
  { what: "two bearer words", send: get("/api/v1/nodes", [...HOST, ["Authorization", `Bearer ${TOKEN} x`]]), statuses: [401] },
  { what: "Basic", send: get("/api/v1/nodes", [...HOST, ["Authorization", `Basic ${TOKEN}`]]), statuses: [401] },
  {
    what: "a same-length token with a non-ASCII character",
    send: get("/api/v1/nodes", [...HOST, ["Authorization", `Bearer ${nonAsciiSameLength}`]]),
    statuses: [401],
  },
  {
    what: "a longer token with non-ASCII characters",
    send: get("/api/v1/nodes", [...HOST, ["Authorization", `Bearer ${utf8("ééé")}${TOKEN}`]]),
    statuses: [401],
  },
  { what: "latin1 bytes as a token", send: get("/api/v1/nodes", [...HOST, ["Authorization", "Bearer \xff\xfe\xfd"]]), statuses: [401] },
  {
    what: "a wrong token first, the right one second",
    send: get("/api/v1/nodes", [...HOST, ["Authorization", "Bearer wrong"], ["Authorization", `Bearer ${TOKEN}`]]),
    statuses: [401],
  },
  // ---- v1 token endpoint: every request it cannot grant on is a 400 (the spec declares no 401) ----
  ...[
    ["null", "null"],
    ["an array", "[]"],
    ["a number", "42"],
    ["a string", '"client_credentials"'],
    ["JSON that does not parse", "{grantType"],
    ["an empty body", ""],
    ["a nested clientId", '{"grantType":"client_credentials","clientId":{"a":1},"clientSecret":"x"}'],
    ["a null clientSecret", '{"grantType":"client_credentials","clientID":"fuzz-client","clientSecret":null}'],
    ["an array grantType", '{"grantType":["client_credentials"]}'],
    ["deeply nested JSON", `${"[".repeat(5000)}${"]".repeat(5000)}`],
    [
      "a same-length non-ASCII secret",
      utf8(JSON.stringify({ grantType: "client_credentials", clientID: CLIENT.id, clientSecret: `${CLIENT.secret.slice(0, -1)}é` })),
    ],
    ["a wrong client of another length", JSON.stringify({ grantType: "client_credentials", clientID: "é", clientSecret: CLIENT.secret })],
  ].map(([what, body]): Case => ({ what: `v1 token, ${what}`, send: postJson("/api/v1/token", body as string), statuses: [400] })),
  {
    what: "v1 token, not JSON",
    send: request("POST", "/api/v1/token", formHeaders, "grantType=client_credentials"),
    statuses: [400],
  },
  {
    what: "v1 token, the right credentials",
    send: postJson("/api/v1/token", JSON.stringify({ grantType: "client_credentials", clientId: CLIENT.id, clientSecret: CLIENT.secret })),
    statuses: [200],
    grants: true,
  },
  { what: "v1 token, an oversized body", send: () => postJson("/api/v1/token", "x".repeat(70_000)), statuses: [413] },
  { what: "v1 token, an oversized chunked body", send: () => chunked("/api/v1/token", 70_000), statuses: [413] },
  // ---- v2 token endpoint: OAuth2, form encoded ----
  ...[
    ["malformed escapes", "grant_type=client_credentials&client_id=%zz&client_secret=%"],
    ["an escape that is not UTF-8", "grant_type=client_credentials&client_id=fuzz-client&client_secret=%C3"],
    ["raw non-ASCII bytes", utf8(`grant_type=client_credentials&client_id=fuzz-client&client_secret=${CLIENT.secret.slice(0, -1)}é`)],
    ["a NUL", "grant_type=client_credentials&client_id=fuzz-client%00&client_secret=x"],
  ].map(([what, body]): Case => ({ what: `v2 token, ${what}`, send: postForm(body as string), statuses: [401] })),
  ...[
    ["a repeated client_id", "grant_type=client_credentials&client_id=a&client_id=fuzz-client&client_secret=x"],
    ["no grant_type", "client_id=fuzz-client"],
    ["an empty body", ""],
    ["a JSON body", JSON.stringify({ grant_type: "client_credentials" })],
  ].map(([what, body]): Case => ({ what: `v2 token, ${what}`, send: postForm(body as string), statuses: [400] })),
  {
    what: "v2 token, the right credentials, escaped where they need not be",
    send: postForm(`grant_type=client%5Fcredentials&client_id=${encodeURIComponent(CLIENT.id)}&client_secret=fuzz%2Dsecret%2D0123456789`),
    statuses: [200],
    grants: true,
  },
  { what: "v2 token, an oversized body", send: () => postForm(`grant_type=client_credentials&x=${"y".repeat(70_000)}`), statuses: [413] },
];

describe("hostile requests to a live run", () => {
  it.each(transport)("scrape server: $what", (c) => run(() => scrapePort, c));
  it.each(transport)("control-plane API: $what", (c) => run(() => apiPort, c));
  it.each(scrapeCases)("scrape server: $what", (c) => run(() => scrapePort, c));
  it.each(apiCases)("control-plane API: $what", (c) => run(() => apiPort, c));
});

// ---- seeded random requests ----

const METHODS = ["GET", "GET", "GET", "GET", "HEAD", "POST", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "FROB", "G T", ""];
const PATHS = [
  "/",
  "/sd",
  "/targets/nvidia-dcgm-exporter/10.0.0.1:9400/metrics",
  "/api/v1/clusters",
  "/api/v1/clusters/{c}",
  "/api/v1/clusters/{c}/metrics",
  "/api/v1/clusters/{c}/nodepools/default/metrics",
  "/api/v1/node-pools",
  "/api/v1/nodes",
  "/api/v1/nodes/telemetry",
  "/api/v1/org-unit/projects",
  "/api/v1/org-unit/departments/telemetry",
  "/api/v1/workloads",
  "/api/v1/workloads/count",
  "/api/v1/workloads/pods",
  "/api/v1/workloads/telemetry",
  "/api/v1/token",
  "/api/v2/token",
];
const PARAMS = [
  "metricType",
  "start",
  "end",
  "numberOfSamples",
  "filterBy",
  "sortBy",
  "sortOrder",
  "offset",
  "limit",
  "search",
  "nodepoolName",
  "telemetryType",
  "groupBy",
  "verbosity",
  "deleted",
  "completed",
  "clusterId",
];
const VALUES = [
  "TOTAL_GPU,GPU_UTILIZATION",
  "ALLOCATED_GPU",
  "2026-01-01T00:00:00Z",
  "0000-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999+23:59",
  "-1",
  "1000",
  "99999999999999999999",
  "1e3",
  "name==default",
  "createdAt>=2026-01-01T00:00:00Z",
  "name=@",
  "desc",
  "true",
  "WORKLOADS_COUNT",
  "Nodepool,Department",
  "default",
  "%25zz",
  "%C3%28",
  "%00",
  "%E2%80%AE",
  "",
];
/** Characters a target may hold as they are, escapes valid and not, and bytes no client should send. */
const SAFE = [..."aZ09-._~!$'()*+,;=:@/", "%20", "%2F", "%25", "%C3%A9", "%C3", "%FF", "%00"];
const HOSTILE = [...'%?&#[]{}|\\^`"<> \t\0\r\n\x7f\x80\xc3\xa9\xff'];

function randomRequest(random: () => number): { bytes: string; head: boolean } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  // Mostly characters that get past the HTTP parser to the routes, now and then ones that do not.
  const noise = (max: number) => Array.from({ length: Math.floor(random() * max) }, () => pick(random() < 0.9 ? SAFE : HOSTILE)).join("");
  const method = random() < 0.7 ? "GET" : pick(METHODS);
  let target = pick(PATHS).replace("{c}", clusterId);
  if (random() < 0.3) target += `/${noise(12)}`;
  if (random() < 0.6)
    target += `?${Array.from({ length: 1 + Math.floor(random() * 4) }, () => `${pick(PARAMS)}=${random() < 0.8 ? pick(VALUES) : noise(10)}`).join("&")}`;
  if (random() < 0.05) target = noise(20);
  const headers: Array<[string, string]> = random() < 0.9 ? [["Host", "127.0.0.1"]] : [];
  const auth = random();
  if (auth < 0.6) headers.push(["Authorization", `Bearer ${TOKEN}`]);
  else if (auth < 0.8) headers.push(["Authorization", `Bearer ${noise(TOKEN.length * 2)}`]);
  if (random() < 0.3) headers.push([pick(["X-Fuzz", "Accept", "Content-Type", "Cookie", noise(8)]), noise(40)]);
  const body =
    method === "POST" || random() < 0.05
      ? pick([
          () => JSON.stringify({ grantType: "client_credentials", clientID: noise(12), clientSecret: noise(24) }),
          () => `grant_type=client_credentials&client_id=${noise(12)}&client_secret=${noise(24)}`,
          () => noise(200),
          () => pick(["null", "[]", "0", '""', "{}", '{"grantType":{}}']),
        ])()
      : "";
  const version = random() < 0.9 ? "HTTP/1.1" : pick(["HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", ""]);
  return { bytes: request(method, target, headers, body, version), head: method === "HEAD" };
}

describe("seeded random requests to a live run", () => {
  it(`${RANDOM_REQUESTS} requests to each server get a well-formed answer under 500 or a closed connection (seed ${SEED})`, async () => {
    console.log(`server fuzz seed: ${SEED} (set GPUSYNTH_FUZZ_SEED to replay another)`);
    const random = prng(SEED);
    const requests = Array.from({ length: RANDOM_REQUESTS }, () => randomRequest(random));
    const statuses = new Map<number, number>();
    for (const port of [scrapePort, apiPort]) {
      for (let i = 0; i < requests.length; i += CONCURRENCY) {
        const batch = requests.slice(i, i + CONCURRENCY);
        const results = await Promise.all(batch.map(({ bytes, head }) => exchange(port, bytes, { heads: [head], timeoutMs: 3000 })));
        results.forEach((result, j) => {
          for (const status of judge(`seed ${SEED}, request ${i + j} ${JSON.stringify(batch[j]?.bytes.slice(0, 300))}`, result, 1))
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
        });
        expect(alive(), live.stderr()).toBe(true);
      }
    }
    console.log(
      `server fuzz statuses: ${[...statuses]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${n} × ${s}`)
        .join(", ")}`,
    );
    // The random requests reach past the HTTP layer: some are served, some refused by the routes.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);
    await stillServing();
  }, 25_000);
});
