/**
 * The environment of a Go server a test starts (Prometheus, vmagent, VictoriaMetrics and
 * VictoriaLogs, the OpenTelemetry Collector). Such a server holds minutes of a small cluster, so
 * Go's collector runs at GOGC=400 rather than the default 100 (vmagent's own default is 30): a few
 * megabytes more heap for a third less CPU in Prometheus (10.4 → 6.7 s over
 * stock-kube-prometheus' five servers), two thirds less in vmagent (6.0 → 1.8 s over
 * remote-write-pipeline's three), and a few tenths of a second less in each file's collectors and
 * VictoriaLogs (collector-scrape, otel-collector, pod-logs-collector; 2026-12-07): CPU the suite's
 * two cores then spend on the tests. GOGC set outside the suite wins. What a server does with the
 * data is the same; only when Go collects its garbage changes.
 */
export function goServerEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, GOGC: process.env.GOGC ?? "400", ...env };
}
