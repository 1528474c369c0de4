import { afterEach, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../../emit/test/otlp-receiver.js";
import { calendarStart } from "./helpers.js";
import { deliveryReport, downReceiver, ensureStopped, expectEverythingDelivered, type LiveProcess, startLive } from "./live-process.js";

const LAB = "blueprints/lab.yaml";
const labStart = calendarStart(LAB);
const MINUTE = 60_000;

let run: LiveProcess | undefined;
let receiver: Receiver | undefined;
let down: { readonly url: string; close(): void } | undefined;
afterEach(() => {
  ensureStopped(run);
  receiver?.kill();
  receiver = undefined;
  down?.close();
  down = undefined;
});

describe("an offline run pushing OTLP", () => {
  it("delivers every scrape and log record at the receiver's pace, stamped on the blueprint's calendar", async () => {
    receiver = await startReceiver();
    // A megabyte of queue for about four megabytes of data (ten scrapes of 13,600 points and
    // their logs): a run that did not wait for its receiver would drop most of it.
    run = startLive(["--offline", "--duration", "10m", "--interval", "1m", "--json", LAB], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      GPUSYNTH_OTLP_QUEUE_BYTES: "1000000",
      // A receiver in a test process that a loaded machine slows past the 10 s default would see
      // a timed-out request again (OTLP retries are at-least-once) and count it twice.
      OTEL_EXPORTER_OTLP_TIMEOUT: "60000",
    });
    const { metrics } = await expectEverythingDelivered(run, receiver);
    expect(metrics.total).toBeGreaterThan(100_000);
    // A scrape every simulated minute from time.start, the last at 30 minutes.
    const times = receiver.requests.flatMap((r) =>
      r.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((s) => s.metrics.flatMap((m) => (m.gauge ?? m.sum)?.dataPoints ?? []))),
    );
    const ms = [...new Set(times.map((p) => Number(BigInt(p.timeUnixNano) / 1_000_000n)))].sort((a, b) => a - b);
    expect([ms[0], ms.at(-1), ms.length]).toEqual([labStart + MINUTE, labStart + 10 * MINUTE, 10]);
  }, 60_000);

  it("goes on when the receiver is down, and says what it could not deliver", async () => {
    down = await downReceiver();
    run = startLive(["--offline", "--duration", "10m", "--interval", "1m", "--logs", "none", "--json", LAB], {
      OTEL_EXPORTER_OTLP_ENDPOINT: down.url,
      // Over OTLP/HTTP the SDK's transport retries a failed connection within the export timeout
      // before it answers, and each paced scrape may wait one timeout for room: 2 s, not the default 10.
      OTEL_EXPORTER_OTLP_TIMEOUT: "2000",
    });
    const { code } = await run.exited();
    expect(code, run.stderr()).toBe(0);
    expect(run.stderr()).toMatch(/warning: OTLP metrics export to .* failed .*the run goes on/);
    const metrics = deliveryReport(run.stdout(), "metrics");
    expect(metrics.delivered).toBe(0);
    expect(metrics.dropped + metrics.undelivered).toBe(metrics.total);
  }, 60_000);
});
