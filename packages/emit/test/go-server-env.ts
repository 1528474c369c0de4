/**
 * The environment of a Go server a test starts (Prometheus, vmagent). Such a server holds minutes
 * of a small cluster, so Go's collector runs at GOGC=400 rather than the default 100 (vmagent's
 * own default is 30): a few megabytes more heap for a third less CPU in Prometheus (10.4 → 6.7 s
 * over stock-kube-prometheus' five servers) and two thirds less in vmagent (6.0 → 1.8 s over
 * remote-write-pipeline's three), CPU the suite's two cores then spend on the tests. GOGC set
 * outside the suite wins. What a server does with the data is the same; only when Go collects
 * its garbage changes.
 */
export function goServerEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, GOGC: process.env.GOGC ?? "400", ...env };
}
