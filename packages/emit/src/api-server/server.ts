/**
 * Serves the Run:ai control-plane API over HTTP, as the 2.24 spec declares it: every endpoint
 * but the token ones needs `Authorization: Bearer <token>` (security scheme bearerAuth) and
 * answers 401 with the spec's Error body without it. A poller written for a real control plane
 * can also obtain the token the way the vendor documents: POST /api/v1/token with a service
 * account's client credentials (JSON), or POST /api/v2/token (OAuth2 form).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { runaiApi } from "@gpusynth/constructs";
import { closeNow, createTimedServer, HTTP_TIMEOUTS, type HttpTimeouts, listenGuarded, originTarget } from "../http-guard.js";
import { type ApiResponse, handle } from "./routes.js";

export interface ApiCredentials {
  /** The bearer token every request must carry. */
  readonly token: string;
  /** A service account that may exchange its credentials for the token. */
  readonly client?: { readonly id: string; readonly secret: string };
}

/** Lifetime the v2 token endpoint states (the spec's OAuth2TokenResponse example, expires_in 3600). */
const TOKEN_LIFETIME_S = 3600;
/** A token request is a few hundred bytes; nothing else here takes a body. */
const MAX_BODY_BYTES = 64 * 1024;
const TOKEN_PATHS = new Set(["/api/v1/token", "/api/v2/token"]);

const error = (status: number, message: string, headers?: Record<string, string>): ApiResponse => ({
  status,
  body: { code: status, message },
  ...(headers === undefined ? {} : { headers }),
});

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * Compares a presented credential with the expected one. Their SHA-256 digests are always 32
 * bytes, so timingSafeEqual (which throws on buffers of different lengths) takes the same time
 * and gives the same answer whatever the length or the bytes of a wrong credential.
 */
const same = (presented: string, expected: string) => timingSafeEqual(digest(presented), digest(expected));

export class ControlPlaneServer {
  private server: Server | undefined;
  private controlPlane: runaiApi.ControlPlane | undefined;
  /** Requests answered, by status code (for the run's closing report). */
  readonly answered = new Map<number, number>();

  constructor(
    private readonly credentials: ApiCredentials,
    private readonly timeouts: HttpTimeouts = HTTP_TIMEOUTS,
  ) {}

  /** Starts answering from this control plane once it has observed the cluster; until then 503. */
  attach(controlPlane: runaiApi.ControlPlane): void {
    this.controlPlane = controlPlane;
  }

  async listen(host: string, port: number): Promise<AddressInfo> {
    const server = createTimedServer((req, res) => {
      this.respond(req)
        .then((response) => this.send(res, response))
        .catch(() => {
          // A request the client abandoned (its body cut short) gets no answer. Nothing else is
          // expected to land here; if something does, the client gets the spec's Error body
          // without the internal message, and the 500 shows in the run's closing report.
          if (res.headersSent || req.socket.destroyed) return;
          this.send(res, error(500, "internal error"));
        });
    }, this.timeouts);
    this.server = server;
    return listenGuarded(server, host, port);
  }

  async close(): Promise<void> {
    if (this.server !== undefined) await closeNow(this.server);
  }

  private async respond(req: IncomingMessage): Promise<ApiResponse> {
    const target = originTarget(req.url);
    if (target === undefined)
      return error(400, "expected a request target in origin form, such as /api/v1/clusters, with well-formed percent-escapes");
    if (TOKEN_PATHS.has(target.path)) return this.tokenRequest(req, target.path);
    if (!this.authorised(req.headers.authorization)) return error(401, "Unauthorized: expected the header Authorization: Bearer <token>");
    if (this.controlPlane?.observed !== true) return error(503, "the simulated cluster is starting; try again in a moment");
    return handle(this.controlPlane, { method: req.method ?? "GET", path: target.path, query: target.query });
  }

  private send(res: ServerResponse, response: ApiResponse): void {
    this.answered.set(response.status, (this.answered.get(response.status) ?? 0) + 1);
    res.writeHead(response.status, { "content-type": "application/json", ...response.headers }).end(JSON.stringify(response.body));
  }

  private authorised(header: string | undefined): boolean {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    return match !== null && same(match[1] as string, this.credentials.token);
  }

  /** Whether both the id and the secret are the service account's; both are compared, so which is wrong does not show. */
  private isClient(id: string, secret: string): boolean {
    const client = this.credentials.client ?? { id: "", secret: "" };
    const idMatches = same(id, client.id);
    const secretMatches = same(secret, client.secret);
    return this.credentials.client !== undefined && idMatches && secretMatches;
  }

  private async tokenRequest(req: IncomingMessage, path: string): Promise<ApiResponse> {
    if (req.method !== "POST") return error(405, `${req.method} ${path}: only POST is served here`, { allow: "POST" });
    const body = await readBody(req);
    // Past the limit the body is not kept, and the connection closes after the answer.
    if (body === undefined) return error(413, `expected a body of at most ${MAX_BODY_BYTES} bytes`, { connection: "close" });
    const contentType = req.headers["content-type"] ?? "";
    return path === "/api/v2/token" ? this.oauth2Token(body) : this.token(body, contentType);
  }

  /** POST /api/v2/token: OAuth2 client credentials, form encoded (spec: grant_token_v2, OAuth2Error). */
  private oauth2Token(body: string): ApiResponse {
    const form = new URLSearchParams(body);
    const repeated = ["grant_type", "client_id", "client_secret"].filter((name) => form.getAll(name).length > 1);
    // RFC 6749 §3.2: request parameters must not be included more than once.
    if (repeated.length > 0)
      return { status: 400, body: { error: "invalid_request", error_description: `repeated parameter: ${repeated.join(", ")}` } };
    if (form.get("grant_type") !== "client_credentials")
      return { status: 400, body: { error: "unsupported_grant_type", error_description: "expected grant_type=client_credentials" } };
    if (!this.isClient(form.get("client_id") ?? "", form.get("client_secret") ?? ""))
      return { status: 401, body: { error: "invalid_client", error_description: "Client authentication failed" } };
    return { status: 200, body: { access_token: this.credentials.token, token_type: "Bearer", expires_in: TOKEN_LIFETIME_S } };
  }

  /**
   * POST /api/v1/token: a TokenRequest in JSON (spec: grant_token). The operation declares no
   * 401, so every request it cannot grant on, wrong credentials included, is a 400.
   */
  private token(body: string, contentType: string): ApiResponse {
    if (!contentType.toLowerCase().includes("json")) return error(400, "expected Content-Type: application/json (TokenRequest)");
    const request = jsonObject(body);
    if (request === undefined) return error(400, "expected a JSON object (TokenRequest)");
    if (request.grantType !== "client_credentials")
      return error(400, `grantType: gpusynth accepts client_credentials, found ${JSON.stringify(request.grantType)}`);
    // The docs write clientId, the spec clientID: both are accepted.
    const fields = { clientID: request.clientId ?? request.clientID, clientSecret: request.clientSecret };
    for (const [name, value] of Object.entries(fields))
      if (value !== undefined && typeof value !== "string")
        return error(400, `${name}: expected a string, found ${value === null ? "null" : typeof value}`);
    if (!this.isClient(String(fields.clientID ?? ""), String(fields.clientSecret ?? ""))) return error(400, "invalid client credentials");
    return { status: 200, body: { accessToken: this.credentials.token } };
  }
}

/** A JSON object's properties, or undefined for anything else: not JSON, null, an array, a number, a string. */
function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The request body, or undefined when it is longer than MAX_BODY_BYTES. Rejects when the client
 * goes before sending all of it. Reads by events, not `for await`: leaving that loop early
 * destroys the request, and with it the socket the 413 has to go out on.
 */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
      resolve(undefined);
      return;
    }
    let size = 0;
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      // The rest is read and dropped, so that closing after the 413 does not reset the
      // connection under a client still sending.
      req.off("data", onData);
      req.resume();
      resolve(undefined);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    // After `end` or an oversized body this settles nothing: the promise has settled already.
    req.once("close", () => reject(new Error("request body cut short")));
  });
}
