/**
 * err_msg texts of DCGM_FI_DEV_XID_ERRORS, verbatim from xidErrCodeToText in
 * internal/pkg/collector/xid_errors.go at NVIDIA/dcgm-exporter 4.5.3-4.8.2 (@691c927), for the
 * XIDs gpusynth can inject (packages/blueprint/src/xid-catalogue.ts). The XID 45 text really is
 * cut off after "cuda" in the source. Codes outside the table read "Unknown Error"
 * (gpu_collector.go, unknownErr).
 */
const XID_MESSAGES: ReadonlyMap<number, string> = new Map([
  [0, "No Error"],
  [13, "Graphics Engine Exception"],
  [31, "GPU memory page fault"],
  [43, "GPU stopped processing"],
  [45, "Preemptive cleanup, due to previous errors -- Most likely to see when running multiple cuda"],
  [48, "Double Bit ECC Error"],
  [62, "Internal micro-controller halt"],
  [63, "ECC page retirement or row remapping recording event"],
  [64, "ECC page retirement or row remapper recording failure"],
  [74, "NVLINK Error"],
  [79, "GPU has fallen off the bus"],
  [92, "High single-bit ECC error rate"],
  [94, "Contained ECC error"],
  [95, "Uncontained ECC error"],
  [119, "GSP RPC Timeout"],
  [120, "GSP Error"],
  [140, "Unrecovered ECC Error"],
]);

export function xidMessage(xid: number): string {
  return XID_MESSAGES.get(xid) ?? "Unknown Error";
}
