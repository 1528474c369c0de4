/**
 * The environment of a Go server a test starts (Prometheus, vmagent, VictoriaMetrics and
 * VictoriaLogs, the OpenTelemetry Collector). Such a server holds minutes of a small cluster, so
 * Go's collector runs at GOGC=400 rather than the default 100 (vmagent's own default is 30): a few
 * megabytes more heap for a third less CPU in Prometheus (10.4 → 6.7 s over
 * stock-kube-prometheus' five servers), two thirds less in vmagent (6.0 → 1.8 s over
 * remote-write-pipeline's three), and a few tenths of a second less in each file's collectors and
 * VictoriaLogs (collector-scrape, otel-collector, pod-logs-collector; 2026-12-07): CPU the suite's
 * two cores then spend on the tests.
 *
 * And each server runs Go code on one thread (GOMAXPROCS=1): the suite keeps every core busy with
 * its workers, so a server's parallel collector and idle threads looking for work only coordinate
 * and spin. Measured on 2 cores in turns (2026-12-08, the six files that start Go servers run
 * together, two runs of each, CPU of the whole process tree): 63.1 and 65.5 s against 67.6 and
 * 68.6 s, the same tests passing. GOGC or GOMAXPROCS set outside the suite wins. What a server does
 * with the data is the same; only how its runtime schedules and collects changes.
 *
 * The OpenTelemetry Collector keeps every thread (`allThreads`): its receivers answer a live run's
 * pushes within the run's closing flush (a second after an interrupt), and on one thread, beside
 * the lab-check on a loaded machine, a collector that also scraped every second left a run's last
 * request undelivered at its interrupt (collector-scrape.test, 2026-12-08).
 */
export function goServerEnv(env: NodeJS.ProcessEnv = {}, { allThreads = false } = {}): NodeJS.ProcessEnv {
  const oneThread = allThreads ? {} : { GOMAXPROCS: process.env.GOMAXPROCS ?? "1" };
  return { ...process.env, GOGC: process.env.GOGC ?? "400", ...oneThread, ...env };
}
