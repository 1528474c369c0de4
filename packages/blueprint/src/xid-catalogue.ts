/**
 * The XID errors a blueprint may inject, and what each does to the workloads and the GPU.
 * Mnemonics and immediate actions follow NVIDIA's Xid catalogue
 * (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), which agrees with NVIDIA's
 * NVSentinel XID mapping CSV (FATAL / NONFATAL; NVIDIA/NVSentinel @6f8b0fcf
 * distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv). The
 * simulation effect is gpusynth's reading of the immediate action for a workload using the GPU:
 * - "none": informational, nothing stops (IGNORE);
 * - "app": the application on that GPU dies, the GPU stays usable (RESTART_APP);
 * - "gpu-reset": applications on the GPU die and the GPU is unusable until it is reset
 *   (RESET_GPU and the workflow XIDs whose documented remedy is a reset or reboot);
 * - "node-reboot": the GPU falls off the bus and stays gone until the node reboots (RESTART_BM).
 */

export type XidEffect = "none" | "app" | "gpu-reset" | "node-reboot";

export interface XidEntry {
  readonly xid: number;
  readonly mnemonic: string;
  readonly immediateAction: string;
  readonly fatal: boolean;
  readonly effect: XidEffect;
}

const entry = (xid: number, mnemonic: string, immediateAction: string, fatal: boolean, effect: XidEffect): XidEntry => ({
  xid,
  mnemonic,
  immediateAction,
  fatal,
  effect,
});

export const XID_CATALOGUE: ReadonlyMap<number, XidEntry> = new Map(
  [
    entry(13, "ROBUST_CHANNEL_GR_EXCEPTION", "RESTART_APP", false, "app"),
    entry(31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "RESTART_APP", false, "app"),
    entry(43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "IGNORE", false, "none"),
    entry(45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "WORKFLOW_XID_45", false, "none"),
    entry(48, "ROBUST_CHANNEL_GPU_ECC_DBE", "WORKFLOW_XID_48", true, "gpu-reset"),
    entry(62, "PMU_HALT_ERROR", "RESET_GPU", true, "gpu-reset"),
    entry(63, "INFOROM_DRAM_RETIREMENT_EVENT", "IGNORE", false, "none"),
    entry(64, "INFOROM_DRAM_RETIREMENT_FAILURE", "RESET_GPU", true, "gpu-reset"),
    entry(74, "NVLINK_ERROR", "WORKFLOW_NVLINK_ERR", true, "gpu-reset"),
    entry(79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "RESTART_BM", true, "node-reboot"),
    entry(92, "EXCESSIVE_SBE_INTERRUPTS", "IGNORE", false, "none"),
    entry(94, "ROBUST_CHANNEL_CONTAINED_ERROR", "RESTART_APP", false, "app"),
    entry(95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "RESET_GPU", true, "gpu-reset"),
    entry(119, "GSP_RPC_TIMEOUT", "RESET_GPU", true, "gpu-reset"),
    entry(120, "GSP_ERROR", "RESET_GPU", true, "gpu-reset"),
    entry(140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "RESET_GPU", true, "gpu-reset"),
  ].map((e) => [e.xid, e]),
);

export const KNOWN_XIDS: readonly number[] = [...XID_CATALOGUE.keys()];

/**
 * XIDs NVIDIA's k8s-device-plugin does not act on: application errors, after which "the GPU
 * should still be healthy" (internal/rm/health.go, getDisabledHealthCheckXids, @02597b97). On
 * every other XID the plugin marks the device Unhealthy and never marks it healthy again: the
 * kubelet stops counting it as allocatable until the plugin restarts, which a node reboot does.
 * DP_DISABLE_HEALTHCHECKS adds to this list (faults.devicePluginDisableHealthchecks).
 */
export const DEVICE_PLUGIN_IGNORED_XIDS: ReadonlySet<number> = new Set([13, 31, 43, 45, 68, 109]);

/**
 * Whether the device plugin ignores an XID under a DP_DISABLE_HEALTHCHECKS value (health.go
 * @02597b97): "all", or any value containing "xids", turns health checks off entirely; otherwise
 * the value is a comma-separated list of XIDs ignored in addition to the application errors.
 */
export function devicePluginIgnores(disableHealthchecks: string): (xid: number) => boolean {
  const value = disableHealthchecks.toLowerCase();
  if (value === "all" || value.includes("xids")) return () => true;
  const extra = new Set(
    value
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part !== "")
      .map(Number),
  );
  return (xid) => DEVICE_PLUGIN_IGNORED_XIDS.has(xid) || extra.has(xid);
}
