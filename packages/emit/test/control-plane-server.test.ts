/**
 * The control-plane API over real HTTP, as a poller meets it: without the bearer token every
 * endpoint answers 401, before the simulation has observed the cluster 503, and a service
 * account can exchange its client credentials for the token at both of the vendor's token
 * endpoints. Every answer is validated against the pinned spec's response for its operation.
 */
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterMetrics, ClusterRun, drive, every, runaiApi } from "@gpusynth/constructs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneServer } from "../src/api-server/server.js";
import { describeWithSpec, loadRunaiSpec, type RunaiSpec } from "./runai-spec.js";

const MINUTE = 60_000;
const TOKEN = "s3cret-token_for.tests";
const CLIENT = { id: "poller", secret: "poller-secret-1" };

describeWithSpec("the control-plane server against the pinned Run:ai spec", () => {
  let spec: RunaiSpec;
  let server: ControlPlaneServer;
  let cp: runaiApi.ControlPlane;
  let base: string;

  beforeAll(async () => {
    spec = await loadRunaiSpec();
    const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url)));
    // A few minutes of the lab, each observed, so the API has something to answer.
    const run = new ClusterRun(blueprint, { seed: 3, metrics: false, controlPlane: { retentionMs: 60 * MINUTE, stepMs: MINUTE } });
    drive(run, every(MINUTE, { toMs: 5 * MINUTE }));
    cp = run.controlPlane as runaiApi.ControlPlane;
    server = new ControlPlaneServer({ token: TOKEN, client: CLIENT });
    server.attach(cp);
    const address: AddressInfo = await server.listen("127.0.0.1", 0);
    base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(() => server.close());

  async function call(path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${base}${path}`, init);
    expect(response.headers.get("content-type")).toBe("application/json");
    return { status: response.status, body: await response.json() };
  }
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

  describe("before the simulation has observed the cluster", () => {
    it("answers 503 with the spec's body, and still 401 without the token", async () => {
      // A control plane of its own that never observes, whatever order the tests run in.
      const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url)));
      const starting = new ControlPlaneServer({ token: TOKEN });
      starting.attach(
        new runaiApi.ControlPlane(blueprint, new ClusterMetrics(blueprint).activity, { retentionMs: 60 * MINUTE, stepMs: MINUTE }),
      );
      const { port } = await starting.listen("127.0.0.1", 0);
      try {
        const answer = await fetch(`http://127.0.0.1:${port}/api/v1/clusters`, bearer(TOKEN));
        expect(answer.status).toBe(503);
        expect(spec.responseErrors("get_clusters", 503, await answer.json())).toEqual([]);
        expect((await fetch(`http://127.0.0.1:${port}/api/v1/clusters`)).status).toBe(401);
        expect(starting.answered.get(503)).toBe(1);
      } finally {
        await starting.close();
      }
    });
  });

  describe("bearer authentication", () => {
    it.each([
      { what: "no Authorization header", init: {} },
      { what: "a wrong token", init: bearer("not-the-token") },
      { what: "the token with one character missing", init: bearer(TOKEN.slice(0, -1)) },
      { what: "the token under another scheme", init: { headers: { authorization: `Basic ${TOKEN}` } } },
      // A header is bytes: é goes as one byte but is two in UTF-8, so the wrong token is longer in bytes.
      { what: "a token of the same length with one non-ASCII character", init: bearer(`${TOKEN.slice(0, -1)}é`) },
      { what: "a longer token of non-ASCII characters", init: bearer(`${"é".repeat(TOKEN.length)}`) },
      { what: "an empty bearer", init: { headers: { authorization: "Bearer " } } },
    ])("$what → 401 with the spec's Error body", async ({ init }) => {
      for (const [path, operationId] of [
        ["/api/v1/clusters", "get_clusters"],
        ["/api/v1/clusters/x/metrics?metricType=TOTAL_GPU", "get_cluster_metrics"],
      ] as const) {
        const { status, body } = await call(path, init);
        expect(status).toBe(401);
        expect(spec.responseErrors(operationId, 401, body)).toEqual([]);
      }
    });

    it("the right token gets the clusters, as the spec's schema has them", async () => {
      const { status, body } = await call("/api/v1/clusters", bearer(TOKEN));
      expect(status).toBe(200);
      expect(spec.responseErrors("get_clusters", 200, body)).toEqual([]);
      expect(body).toHaveLength(1);
    });

    it("counts what it answered, by status, for the run's closing line", async () => {
      const before = new Map(server.answered);
      await call("/api/v1/clusters");
      await call("/api/v1/clusters", bearer(TOKEN));
      await call("/api/v1/clusters", bearer(TOKEN));
      const added = (status: number) => (server.answered.get(status) ?? 0) - (before.get(status) ?? 0);
      expect([added(401), added(200)]).toEqual([1, 2]);
    });
  });

  describe("token endpoints", () => {
    const json = (value: unknown): RequestInit => ({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(value),
    });
    const form = (value: Record<string, string>): RequestInit => ({
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(value).toString(),
    });

    it("v1 exchanges a service account's client credentials for the token, and the token works", async () => {
      const { status, body } = await call(
        "/api/v1/token",
        json({ grantType: "client_credentials", clientID: CLIENT.id, clientSecret: CLIENT.secret }),
      );
      expect(status).toBe(200);
      expect(spec.responseErrors("grant_token", 200, body)).toEqual([]);
      const { accessToken } = body as { accessToken: string };
      expect((await call("/api/v1/nodes", bearer(accessToken))).status).toBe(200);
    });

    it("v2 does the OAuth2 client-credentials grant, form encoded", async () => {
      const { status, body } = await call(
        "/api/v2/token",
        form({ grant_type: "client_credentials", client_id: CLIENT.id, client_secret: CLIENT.secret }),
      );
      expect(status).toBe(200);
      expect(spec.responseErrors("grant_token_v2", 200, body)).toEqual([]);
      expect(body).toMatchObject({ access_token: TOKEN, token_type: "Bearer" });
    });

    it.each([
      {
        what: "v1, wrong secret",
        path: "/api/v1/token",
        init: json({ grantType: "client_credentials", clientID: CLIENT.id, clientSecret: "wrong-secret" }),
        operationId: "grant_token",
        status: 400,
      },
      {
        what: "v1, a grant gpusynth does not do",
        path: "/api/v1/token",
        init: json({ grantType: "refresh_token" }),
        operationId: "grant_token",
        status: 400,
      },
      {
        what: "v1, a body that is not JSON",
        path: "/api/v1/token",
        init: { method: "POST", headers: { "content-type": "application/json" }, body: "{grantType" },
        operationId: "grant_token",
        status: 400,
      },
      {
        what: "v2, wrong secret",
        path: "/api/v2/token",
        init: form({ grant_type: "client_credentials", client_id: CLIENT.id, client_secret: "wrong-secret" }),
        operationId: "grant_token_v2",
        status: 401,
      },
      {
        what: "v2, unknown client",
        path: "/api/v2/token",
        init: form({ grant_type: "client_credentials", client_id: "someone", client_secret: CLIENT.secret }),
        operationId: "grant_token_v2",
        status: 401,
      },
      {
        what: "v2, a grant gpusynth does not do",
        path: "/api/v2/token",
        init: form({ grant_type: "password", username: "u", password: "p" }),
        operationId: "grant_token_v2",
        status: 400,
      },
      ...[
        { what: "null", body: "null" },
        { what: "an array", body: "[]" },
        { what: "a number", body: "42" },
        { what: "a nested clientId", body: '{"grantType":"client_credentials","clientId":{"a":1},"clientSecret":"x"}' },
        {
          what: "the secret with a non-ASCII last character",
          body: JSON.stringify({ grantType: "client_credentials", clientID: CLIENT.id, clientSecret: `${CLIENT.secret.slice(0, -1)}é` }),
        },
        {
          what: "a client id of another length",
          body: JSON.stringify({ grantType: "client_credentials", clientID: "p", clientSecret: CLIENT.secret }),
        },
      ].map(({ what, body }) => ({
        what: `v1, JSON body ${what}`,
        path: "/api/v1/token",
        init: { method: "POST", headers: { "content-type": "application/json" }, body },
        operationId: "grant_token",
        status: 400,
      })),
      {
        what: "v2, the secret with a non-ASCII last character",
        path: "/api/v2/token",
        init: form({ grant_type: "client_credentials", client_id: CLIENT.id, client_secret: `${CLIENT.secret.slice(0, -1)}é` }),
        operationId: "grant_token_v2",
        status: 401,
      },
      {
        what: "v2, a malformed escape for the secret",
        path: "/api/v2/token",
        init: { ...form({}), body: `grant_type=client_credentials&client_id=${CLIENT.id}&client_secret=%zz` },
        operationId: "grant_token_v2",
        status: 401,
      },
      {
        what: "v2, client_id twice",
        path: "/api/v2/token",
        init: { ...form({}), body: `grant_type=client_credentials&client_id=x&client_id=${CLIENT.id}&client_secret=${CLIENT.secret}` },
        operationId: "grant_token_v2",
        status: 400,
      },
    ])("$what → $status, as the spec declares it", async ({ path, init, operationId, status: expected }) => {
      const { status, body } = await call(path, init);
      expect(status).toBe(expected);
      expect(spec.responseErrors(operationId, status, body)).toEqual([]);
      expect(JSON.stringify(body)).not.toContain(TOKEN);
    });
  });

  describe("requests no client should send", () => {
    it.each([
      { what: "//", path: "//", status: 404 },
      { what: "//a:99999/ (a path that looks like a host)", path: "//a:99999/", status: 404 },
      { what: "a malformed escape in the path", path: "/api/v1/node-pools/%zz", status: 400 },
      { what: "a malformed escape in the query", path: "/api/v1/clusters?verbosity=%zz", status: 400 },
      { what: "a path parameter whose escape is not UTF-8", path: "/api/v1/clusters/x/nodepools/%C3/metrics", status: 400 },
    ])("$what → $status with the spec's Error body", async ({ path, status: expected }) => {
      const { status, body } = await call(path, bearer(TOKEN));
      expect(status).toBe(expected);
      expect(spec.schemaErrors("Error", body)).toEqual([]);
    });

    it("a query parameter naming a node pool is decoded once: %25zz names the pool %zz, which does not exist", async () => {
      const clusterId = cp.blueprint.cluster.clusterId;
      const query = "metricType=TOTAL_GPU&start=2026-01-05T00:00:00Z&end=2026-01-05T00:05:00Z&nodepoolName=%25zz";
      const { status, body } = await call(`/api/v1/clusters/${clusterId}/metrics?${query}`, bearer(TOKEN));
      expect(status).toBe(404);
      expect(spec.responseErrors("get_cluster_metrics", 404, body)).toEqual([]);
    });

    it.each([
      { what: "PUT on an endpoint", path: "/api/v1/clusters", method: "PUT", allow: "GET" },
      { what: "GET on the token endpoint", path: "/api/v1/token", method: "GET", allow: "POST" },
    ])("$what → 405 naming the method it serves", async ({ path, method, allow }) => {
      const response = await fetch(`${base}${path}`, { method, ...bearer(TOKEN) });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe(allow);
      expect(spec.schemaErrors("Error", await response.json())).toEqual([]);
    });

    it("a token request body over 64 KiB → 413, not read on and parsed", async () => {
      const { status, body } = await call("/api/v1/token", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          grantType: "client_credentials",
          clientID: CLIENT.id,
          clientSecret: CLIENT.secret,
          pad: "x".repeat(70_000),
        }),
      });
      expect(status).toBe(413);
      expect(spec.schemaErrors("Error", body)).toEqual([]);
    });
  });
});
