/**
 * How long an evicted pod takes to terminate. The kubelet sends its container SIGTERM and, if it
 * is still running after the grace period, SIGKILL (pod termination, kubernetes.io/docs/concepts/
 * workloads/pods/pod-lifecycle/#pod-termination); KAI's victim keeps its GPUs until then. Whether
 * a container exits on SIGTERM depends on its first process: Linux delivers a signal with the
 * default action to a namespace's PID 1 only if it installed a handler (docker container run
 * --init, docs.docker.com/reference/cli/docker/container/run/#init: "it ignores any signal with the
 * default action"), so a `python train.py` that is the container's PID 1 runs on until SIGKILL,
 * while a server or launcher that handles SIGTERM stops within seconds:
 * - distributed training starts its ranks with torchrun, whose elastic agent handles SIGTERM and
 *   stops its workers (torch/distributed/elastic/multiprocessing/api.py, _terminate_process_handler);
 * - notebooks (Jupyter's server shuts down its kernels on SIGTERM) and inference servers (Triton,
 *   vLLM and TorchServe stop on SIGTERM) exit within seconds;
 * - single-pod training is PID 1 Python about half the time (a modelling choice: launched through
 *   a shell or an init such as tini, or directly).
 * A quick exit takes 1 to 8 s (a modelling choice: flushing logs, closing NCCL, a server's
 * in-flight requests). The same workload behaves the same way at every eviction.
 */
import type { WorkloadType } from "@gpusynth/blueprint";
import type { Rng } from "./rng.js";

/** The share of a type's workloads that exit on SIGTERM (the rest are killed at the grace period). */
const EXITS_ON_SIGTERM: Readonly<Record<WorkloadType, number>> = {
  "distributed-training": 1,
  training: 0.5,
  interactive: 1,
  inference: 1,
};

const QUICK_EXIT_MS = { from: 1_000, to: 8_000 } as const;

/**
 * When an evicted workload's pods have terminated, `graceMs` at the latest. `handlesSigterm`: the
 * workload's own draw (its first eviction's), `rng`: the eviction's.
 */
export function terminationMs(type: WorkloadType, handlesSigterm: number, rng: Rng, graceMs: number): number {
  if (handlesSigterm >= EXITS_ON_SIGTERM[type]) return graceMs;
  return Math.min(graceMs, QUICK_EXIT_MS.from + Math.round(rng.float() * (QUICK_EXIT_MS.to - QUICK_EXIT_MS.from)));
}
