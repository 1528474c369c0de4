/**
 * The pseudonymisation story on a pipeline someone else wrote: an offline run of
 * preemption-storm.yaml pushes OTLP/HTTP to vmagent (VictoriaMetrics 1.112, Debian trixie's package), which remote-writes
 * every series twice — through deploy/vmagent/pseudonymise.yml into one Prometheus (Debian's, as a
 * remote-write receiver), and as it came into another. `gpusynth leakcheck --prometheus` must find
 * the blueprint's names in the second and none in the first, and the first must answer the
 * journeys' joins on namespace and pod as the second does: the pseudonyms hide names without
 * breaking queries.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusServer, prometheusBinary } from "../../emit/test/prometheus-server.js";
import { main } from "../src/main.js";
import { calendarStart, captureOutput } from "./helpers.js";
import { startLive } from "./live-process.js";
import { startVictoriaMetrics, victoriaMetricsBinary, vmagentFlags, vmagentForwarded } from "./victoria-metrics.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const vmagent = victoriaMetricsBinary("vmagent");
const SCENARIO = "blueprints/scenarios/preemption-storm.yaml";
const HOUR = 3_600_000;

describe.skipIf(prometheusBinary === "" || vmagent === "")(
  "vmagent pseudonymising gpusynth's series (deploy/vmagent/pseudonymise.yml)",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "gpusynth-pseudonymise-"));
    const children: ChildProcess[] = [];
    const servers: PrometheusServer[] = [];
    let pseudonymised = "";
    let clear = "";
    /** The time of the last pushed scrape (Unix seconds), where both Prometheus servers are queried. */
    let at = 0;

    const startStorage = async () => {
      const prometheus = await PrometheusServer.startRemoteWriteReceiver();
      servers.push(prometheus);
      return prometheus.api;
    };
    const query = async (url: string, promql: string): Promise<number> => {
      const body = (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}&time=${at}`)).json()) as {
        data: { result: Array<{ value: [number, string] }> };
      };
      return Number(body.data.result[0]?.value[1] ?? 0);
    };
    const leakcheck = async (url: string) => {
      const { output, text } = captureOutput();
      const code = await main(["leakcheck", "--blueprint", join(root, SCENARIO), "--prometheus", url, "--limit", "3"], output);
      return { code, text: text.out };
    };

    beforeAll(async () => {
      [pseudonymised, clear] = await Promise.all([startStorage(), startStorage()]);
      const agent = await startVictoriaMetrics(
        vmagent,
        (port) => [
          ...vmagentFlags(port, join(dir, "vmagent")),
          `-remoteWrite.url=${pseudonymised}/api/v1/write`,
          `-remoteWrite.urlRelabelConfig=${join(root, "deploy/vmagent/pseudonymise.yml")}`,
          `-remoteWrite.url=${clear}/api/v1/write`,
          "-remoteWrite.urlRelabelConfig=",
        ],
        { GPUSYNTH_PSEUDONYM_SALT: "test-salt" },
      );
      children.push(agent.child);
      // The storm's first hour, a scrape every 10 simulated minutes, pushed offline: the subject is
      // what vmagent writes, not the pace.
      const live = startLive(["--offline", "--duration", "1h", "--interval", "10m", "--logs", "none", SCENARIO], {
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${agent.url}/opentelemetry/v1/metrics`,
      });
      const { code } = await live.exited();
      expect(code, live.stderr()).toBe(0);
      // Both hold the last scrape: the storm's hour, on its calendar.
      at = (calendarStart(SCENARIO) + HOUR) / 1000;
      await vmagentForwarded([pseudonymised, clear], at * 1000);
    }, 90_000);

    afterAll(async () => {
      for (const child of children) child.kill("SIGKILL");
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(dir, { recursive: true, force: true });
    });

    it("leaves none of the blueprint's names in clear, where the unrelabelled copy has them", async () => {
      const before = await leakcheck(clear);
      expect(before.code).toBe(1);
      expect(before.text).toMatch(/leakcheck: \d+ finding\(s\) of \d+ of \d+ sensitive names in clear/);
      const after = await leakcheck(pseudonymised);
      expect(after.text).toMatch(/leakcheck: none of \d+ sensitive names appears in clear/);
      expect(after.code).toBe(0);
    });

    it("answers the joins on namespace and pod as the names in clear do", async () => {
      const joins = [
        'count(DCGM_FI_DEV_GPU_UTIL{pod!=""})',
        'count(DCGM_FI_DEV_GPU_UTIL{pod!=""} * on (namespace, pod) group_left () max by (namespace, pod) (kube_pod_info))',
        'count(max by (namespace, pod) (kube_pod_status_phase{phase="Running"} == 1) * on (namespace, pod) group_left () max by (namespace, pod) (kube_pod_labels))',
        "count(count by (namespace) (kube_pod_info))",
      ];
      for (const promql of joins) {
        const [a, b] = [await query(pseudonymised, promql), await query(clear, promql)];
        expect(b, promql).toBeGreaterThan(0);
        expect(a, promql).toBe(b);
      }
    });
  },
);
