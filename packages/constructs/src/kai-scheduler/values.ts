/**
 * How KAI-Scheduler prints resources in its log lines and event texts (NVIDIA/KAI-Scheduler
 * v0.13.0 @5d35ecab, pkg/scheduler/api/resource_info): every number through HumanizeResource,
 * CPU in cores, memory in decimal GB.
 */

/**
 * HumanizeResource: -1 is Unlimited, anything else go-humanize v1.0.1's FtoaWithDigits(v, 3):
 * six decimals cut (not rounded) to three, trailing zeros and the dot dropped.
 */
export function humanize(value: number): string {
  if (value === -1) return "Unlimited";
  const fixed = value.toFixed(6);
  const dot = fixed.indexOf(".");
  return fixed
    .slice(0, dot + 4)
    .replace(/0+$/, "")
    .replace(/\.$/, "");
}

/** *Resource.String() (resource_info.go:121): `CPU: c (cores), memory: m (GB), Gpus: g`. */
export function resourceText(cpuMilli: number, memoryBytes: number, gpus: number): string {
  return `CPU: ${humanize(cpuMilli / 1000)} (cores), memory: ${humanize(memoryBytes / 1e9)} (GB), Gpus: ${humanize(gpus)}`;
}

/** *ResourceRequirements.String() (resource_requirment.go:142): `GPU: g, CPU: c (cores), memory: m (GB)`. */
export function requirementsText(gpus: number, cpuMilli: number, memoryBytes: number): string {
  return `GPU: ${humanize(gpus)}, CPU: ${humanize(cpuMilli / 1000)} (cores), memory: ${humanize(memoryBytes / 1e9)} (GB)`;
}

/**
 * The queue resources of a reclaim's Evict message (api/unschedule_info.go): GPUs of one or more
 * truncated to whole devices, an unlimited CPU or memory quota as Unlimited (-1 in millicores or
 * bytes), otherwise as requirementsText.
 */
export function queueResourceText(gpus: number, cpuMilli: number, memoryBytes: number): string {
  const gpu = gpus >= 1 ? String(Math.trunc(gpus)) : humanize(gpus);
  const cpu = cpuMilli === -1 ? "Unlimited" : humanize(cpuMilli / 1000);
  const memory = memoryBytes === -1 ? "Unlimited" : humanize(memoryBytes / 1e9);
  return `GPU: ${gpu}, CPU: ${cpu} (cores), memory: ${memory} (GB)`;
}
