/**
 * Serves the Run:ai control-plane API over HTTP, as the 2.24 spec declares it: every endpoint
 * but the token ones needs `Authorization: Bearer <token>` (security scheme bearerAuth) and
 * answers 401 with the spec's Error body without it. A poller written for a real control plane
 * can also obtain the token the way the vendor documents: POST /api/v1/token with a service
 * account's client credentials (JSON), or POST /api/v2/token (OAuth2 form).
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { runaiApi } from "@gpusynth/constructs";
import { type ApiResponse, handle } from "./routes.js";

export interface ApiCredentials {
  /** The bearer token every request must carry. */
  readonly token: string;
  /** A service account that may exchange its credentials for the token. */
  readonly client?: { readonly id: string; readonly secret: string };
}

/** Lifetime the v2 token endpoint states (the spec's OAuth2TokenResponse example, expires_in 3600). */
const TOKEN_LIFETIME_S = 3600;
const MAX_BODY_BYTES = 64 * 1024;

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export class ControlPlaneServer {
  private server: Server | undefined;
  private controlPlane: runaiApi.ControlPlane | undefined;
  /** Requests answered, by status code (for the run's closing report). */
  readonly answered = new Map<number, number>();

  constructor(private readonly credentials: ApiCredentials) {}

  /** Starts answering from this control plane once it has observed the cluster; until then 503. */
  attach(controlPlane: runaiApi.ControlPlane): void {
    this.controlPlane = controlPlane;
  }

  async listen(host: string, port: number): Promise<AddressInfo> {
    const server = createServer((req, res) => {
      this.serve(req, res).catch((error: unknown) => send(res, { status: 500, body: { code: 500, message: String(error) } }));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    return server.address() as AddressInfo;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    let response: ApiResponse;
    if (req.method === "POST" && (url.pathname === "/api/v1/token" || url.pathname === "/api/v2/token")) {
      response = this.token(url.pathname, await readBody(req), req.headers["content-type"] ?? "");
    } else if (!this.authorised(req.headers.authorization)) {
      response = { status: 401, body: { code: 401, message: "Unauthorized: expected the header Authorization: Bearer <token>" } };
    } else if (this.controlPlane?.observed !== true) {
      response = { status: 503, body: { code: 503, message: "the simulated cluster is starting; try again in a moment" } };
    } else {
      response = handle(this.controlPlane, { method: req.method ?? "GET", path: url.pathname, query: url.searchParams });
    }
    this.answered.set(response.status, (this.answered.get(response.status) ?? 0) + 1);
    send(res, response);
  }

  private authorised(header: string | undefined): boolean {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    return match !== null && same(match[1] as string, this.credentials.token);
  }

  private token(path: string, body: string, contentType: string): ApiResponse {
    const client = this.credentials.client;
    if (path === "/api/v2/token") {
      // OAuth2 client credentials, form encoded (spec: OAuth2TokenRequest / OAuth2Error).
      const form = new URLSearchParams(body);
      if (form.get("grant_type") !== "client_credentials")
        return { status: 400, body: { error: "unsupported_grant_type", error_description: "expected grant_type=client_credentials" } };
      if (client === undefined || !same(form.get("client_id") ?? "", client.id) || !same(form.get("client_secret") ?? "", client.secret))
        return { status: 401, body: { error: "invalid_client", error_description: "Client authentication failed" } };
      return { status: 200, body: { access_token: this.credentials.token, token_type: "Bearer", expires_in: TOKEN_LIFETIME_S } };
    }
    let request: Record<string, unknown>;
    try {
      request = contentType.includes("json") ? (JSON.parse(body) as Record<string, unknown>) : {};
    } catch {
      return { status: 400, body: { code: 400, message: "expected a JSON body (TokenRequest)" } };
    }
    if (request.grantType !== "client_credentials")
      return {
        status: 400,
        body: { code: 400, message: `grantType: gpusynth accepts client_credentials, found ${JSON.stringify(request.grantType)}` },
      };
    // The docs write clientId, the spec clientID: both are accepted.
    const id = String(request.clientId ?? request.clientID ?? "");
    if (client === undefined || !same(id, client.id) || !same(String(request.clientSecret ?? ""), client.secret))
      // grant_token declares no 401: the spec's answer to credentials it cannot grant on is 400.
      return { status: 400, body: { code: 400, message: "invalid client credentials" } };
    return { status: 200, body: { accessToken: this.credentials.token } };
  }
}

function send(res: ServerResponse, response: ApiResponse): void {
  res.writeHead(response.status, { "content-type": "application/json", ...response.headers }).end(JSON.stringify(response.body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) break;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
