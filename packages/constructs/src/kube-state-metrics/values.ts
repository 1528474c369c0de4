/**
 * Label values kube-state-metrics writes for every pod, whoever owns it (the users' pods in
 * index.ts, the system's in system-samples.ts), and the image digests both show.
 */
import { stableHex } from "../noise.js";

/** kube_pod_status_phase's one series per phase (pod.go). */
export const PHASES = ["Pending", "Succeeded", "Failed", "Unknown", "Running"] as const;
/** The three statuses of a condition's series (utils.go addConditionMetrics). */
export const CONDITION_STATUSES = ["true", "false", "unknown"] as const;
/** Status reasons KSM reports for every pod, 1 for the pod's own (pod.go podStatusReasons). */
export const POD_STATUS_REASONS = ["Evicted", "NodeAffinity", "NodeLost", "Shutdown", "UnexpectedAdmissionError"] as const;

/** `<repository>@sha256:<digest>` of an image reference (its tag dropped), worked out once per image. */
const imageIds = new Map<string, string>();
export function imageId(image: string): string {
  let id = imageIds.get(image);
  if (id === undefined) {
    id = `${imageRepository(image)}@sha256:${stableHex(`image/${image}`, 8)}`;
    imageIds.set(image, id);
  }
  return id;
}

/** An image reference without its tag or digest: the repository a digest is appended to. */
function imageRepository(image: string): string {
  const at = image.indexOf("@");
  if (at >= 0) return image.slice(0, at);
  const slash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  return colon > slash ? image.slice(0, colon) : image;
}
