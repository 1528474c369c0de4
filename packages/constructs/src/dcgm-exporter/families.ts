/**
 * dcgm-exporter's default counters, one place per family: name, CSV type and HELP text exactly
 * as etc/default-counters.csv has them at NVIDIA/dcgm-exporter 4.5.3-4.8.2 (@691c927), and the
 * label template of internal/pkg/rendermetrics/render_metrics.go. Documented in signals/dcgm-exporter.md
 * under the same ids.
 */
import type { MetricFamily, MetricType } from "../catalogue.js";

/**
 * gpuMetricsFormat: gpu, UUID, pci_bus_id, device, modelName, [Hostname], then the Labels map
 * sorted (DCGM_FI_DRIVER_VERSION), then the Attributes map sorted (container, err_code,
 * err_msg, namespace, pod). err_code/err_msg only on DCGM_FI_DEV_XID_ERRORS.
 */
export const GPU_LABELS = [
  "gpu",
  "UUID",
  "pci_bus_id",
  "device",
  "modelName",
  "Hostname",
  "DCGM_FI_DRIVER_VERSION",
  "container",
  "namespace",
  "pod",
] as const;
/** The same with err_code and err_msg, which sort between container and namespace. */
const XID_LABELS = [...GPU_LABELS.slice(0, 8), "err_code", "err_msg", ...GPU_LABELS.slice(8)] as const;

const family = (id: string, name: string, type: MetricType, help: string, labels: readonly string[] = GPU_LABELS): MetricFamily => ({
  id: `dcgm-exporter.${id}`,
  name,
  type,
  help,
  labels,
});

export const DCGM = {
  smClock: family("sm_clock", "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
  memClock: family("mem_clock", "DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
  memoryTemp: family("memory_temp", "DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
  gpuTemp: family("gpu_temp", "DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
  powerUsage: family("power_usage", "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
  totalEnergy: family(
    "total_energy_consumption",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "counter",
    "Total energy consumption since boot (in mJ).",
  ),
  pcieReplay: family("pcie_replay_counter", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
  gpuUtil: family("gpu_util", "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
  memCopyUtil: family("mem_copy_util", "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
  encUtil: family("enc_util", "DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
  decUtil: family("dec_util", "DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
  xidErrors: family("xid_errors", "DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", XID_LABELS),
  // Commented out in the default file; emitted when the blueprint enables them (telemetry.dcgmCounters).
  powerViolation: family(
    "power_violation",
    "DCGM_FI_DEV_POWER_VIOLATION",
    "counter",
    "Throttling duration due to power constraints (in ns).",
  ),
  thermalViolation: family(
    "thermal_violation",
    "DCGM_FI_DEV_THERMAL_VIOLATION",
    "counter",
    "Throttling duration due to thermal constraints (in ns).",
  ),
  fbFree: family("fb_free", "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
  fbUsed: family("fb_used", "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
  fbReserved: family("fb_reserved", "DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."),
  vgpuLicense: family("vgpu_license_status", "DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
  uncorrectableRemappedRows: family(
    "uncorrectable_remapped_rows",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "counter",
    "Number of remapped rows for uncorrectable errors",
  ),
  correctableRemappedRows: family(
    "correctable_remapped_rows",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "counter",
    "Number of remapped rows for correctable errors",
  ),
  rowRemapFailure: family("row_remap_failure", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
  grEngineActive: family("prof_gr_engine_active", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
  tensorActive: family(
    "prof_pipe_tensor_active",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "gauge",
    "Ratio of cycles the tensor (HMMA) pipe is active.",
  ),
  dramActive: family(
    "prof_dram_active",
    "DCGM_FI_PROF_DRAM_ACTIVE",
    "gauge",
    "Ratio of cycles the device memory interface is active sending or receiving data.",
  ),
  pcieTx: family(
    "prof_pcie_tx_bytes",
    "DCGM_FI_PROF_PCIE_TX_BYTES",
    "gauge",
    "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.",
  ),
  pcieRx: family(
    "prof_pcie_rx_bytes",
    "DCGM_FI_PROF_PCIE_RX_BYTES",
    "gauge",
    "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.",
  ),
} as const;

export const DCGM_FAMILIES: readonly MetricFamily[] = Object.values(DCGM);
