/**
 * The blueprint schema: the one declaration of a simulated Run:ai cluster. Everything the
 * simulation knows about the world comes from here. The JSON Schema in blueprints/ is generated
 * from this file (`just gen`), so descriptions here are what editors show while typing.
 *
 * Structural rules live here; rules that relate one part of the blueprint to another (unknown
 * project, quotas exceeding the department, a workload that can never fit) live in
 * cross-reference.ts.
 */
import { z } from "zod";
import { formatDuration, parseDuration } from "./duration.js";
import { GPU_MODEL_IDS } from "./gpu-models.js";
import { KNOWN_XIDS } from "./xid-catalogue.js";

/** Kubernetes DNS-1123 label: names become namespaces, pod names and label values. */
const K8S_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const name = (what: string) =>
  z
    .string()
    .max(63)
    .regex(K8S_NAME, {
      message: `${what} must be a Kubernetes DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit)`,
    });

const DURATION_PATTERN = "^(\\d+(\\.\\d+)?(ms|s|m|h|d|w))+$";
const DURATION_DESCRIPTION = 'Duration: digits with a unit (ms, s, m, h, d, w), e.g. "90s", "1h30m", "7d".';

/**
 * The longest duration a blueprint may hold: 100 years. Runs end before 2262-04-11 (see
 * LATEST_START_MS), so anything longer could never happen in a run and can only be a typo; the
 * bound also keeps every duration a finite, exact number of milliseconds.
 */
export const MAX_BLUEPRINT_DURATION_MS = 36_525 * 86_400_000;

/** A duration text, checked to lie within [minMs, maxMs]; the message quotes the text as written. */
function durationBetween(minMs: number, maxMs: number, expected: string) {
  return z
    .string()
    .regex(new RegExp(DURATION_PATTERN), { message: 'a duration such as "90s", "15m", "1h30m" or "7d"' })
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined || ms < minMs || ms > maxMs) {
        ctx.issues.push({ code: "custom", message: `expected ${expected}`, input: text });
        return z.NEVER;
      }
      return ms;
    })
    .meta({ description: DURATION_DESCRIPTION });
}

export const durationSchema = durationBetween(
  0,
  MAX_BLUEPRINT_DURATION_MS,
  `a duration of at most ${formatDuration(MAX_BLUEPRINT_DURATION_MS)} (100 years)`,
);

const percent = z.number().min(0).max(100);

/**
 * An empirical CDF as the GPU-cluster traces publish them: [value, cumulative % of workloads
 * with at most that value], ascending, ending at 100.
 */
function cdf<T extends z.ZodType<number, unknown>>(value: T, valueName: string) {
  return z
    .array(z.tuple([value, percent]))
    .min(1)
    .superRefine((points, ctx) => {
      for (let i = 1; i < points.length; i++) {
        const [prevValue, prevPct] = points[i - 1] as [number, number];
        const [curValue, curPct] = points[i] as [number, number];
        if (curValue <= prevValue) {
          ctx.addIssue({
            code: "custom",
            path: [i, 0],
            message: `expected ${valueName}s in ascending order (greater than the previous point's)`,
            input: points[i]?.[0],
          });
        }
        if (curPct < prevPct) {
          ctx.addIssue({
            code: "custom",
            path: [i, 1],
            message: `expected cumulative percentages that never decrease (previous point: ${prevPct})`,
            input: curPct,
          });
        }
      }
      const last = points[points.length - 1] as [number, number];
      if (last[1] !== 100) {
        ctx.addIssue({
          code: "custom",
          path: [points.length - 1, 1],
          message: "expected the last point of a CDF to reach 100 (%)",
          input: last[1],
        });
      }
    });
}

const gpuCount = z.int().min(1).max(4096);

/**
 * Size bounds of one blueprint. Every process — every shard of a run, every worker thread —
 * simulates the whole cluster, so these bound the simulation; what one shard emits has its own,
 * lower ceiling (MAX_SHARD_GPUS in constructs/shard.ts: a larger cluster runs as more shards).
 * Measured on Node 20: blueprints/hyperscale.yaml (12,800 nodes × 8 = 102,400 GPUs, the
 * 100,000-GPU clusters in service today) simulates a day in about 5 s and holds at most 360 MB of
 * heap over two days; the bounds leave it a quarter of headroom (131,072 GPUs on 16,384 nodes,
 * about 450 MB). 50 pools × 20,000 nodes ran out of heap within a minute.
 */
export const MAX_NODES = 16_384;
export const MAX_GPUS = 131_072;

/**
 * OTLP stamps points with unsigned 64-bit nanoseconds since the Unix epoch, and Go consumers
 * (the OpenTelemetry Collector) turn them into signed int64 nanoseconds, which end at
 * 2262-04-11T23:47:16.854Z: the last millisecond (2^63 − 1 ns) is this one.
 */
export const OTLP_TIME_END_MS = 9_223_372_036_854;
/** Starts must leave room for a run before OTLP_TIME_END_MS; 2200 leaves 62 years. */
export const LATEST_START_MS = Date.UTC(2200, 0, 1);
/** Before the Unix epoch OTLP has no timestamps at all (they are unsigned). */
export const EARLIEST_START_MS = 0;

/**
 * What a pool's nodes run, as their status reports it (NodeSystemInfo): pools are imaged and
 * upgraded apart, so versions may differ between pools. The defaults: a 2024-era GPU node
 * (Kubernetes 1.30, which kube-state-metrics v2.13 supports; Ubuntu 22.04 with its GA kernel;
 * containerd 1.7), a modelling choice (signals/kube-state-metrics.md).
 */
const NODE_SOFTWARE_DEFAULTS = {
  kubeletVersion: "v1.30.2",
  kernelVersion: "5.15.0-113-generic",
  osImage: "Ubuntu 22.04.4 LTS",
  containerRuntimeVersion: "containerd://1.7.18",
} as const;

const nodeSoftwareSchema = z
  .strictObject({
    kubeletVersion: z
      .string()
      .regex(/^v1\.\d+\.\d+$/, { message: 'expected a kubelet version such as "v1.30.2"' })
      .default(NODE_SOFTWARE_DEFAULTS.kubeletVersion)
      .meta({ description: "The kubelet's version (kube_node_info's kubelet_version and kubeproxy_version)." }),
    kernelVersion: z.string().min(1).max(128).default(NODE_SOFTWARE_DEFAULTS.kernelVersion).meta({ description: "uname -r of the node." }),
    osImage: z
      .string()
      .min(1)
      .max(128)
      .default(NODE_SOFTWARE_DEFAULTS.osImage)
      .meta({ description: "The node's /etc/os-release PRETTY_NAME." }),
    containerRuntimeVersion: z
      .string()
      .regex(/^containerd:\/\/\d+\.\d+\.\d+$/, { message: 'expected a containerd version such as "containerd://1.7.18"' })
      .default(NODE_SOFTWARE_DEFAULTS.containerRuntimeVersion)
      .meta({ description: "The container runtime and its version, as the kubelet reports it." }),
  })
  .default(NODE_SOFTWARE_DEFAULTS)
  .meta({ description: "What the pool's nodes run (kube_node_info): kubelet, kernel, OS image and container runtime." });

const nodePoolSchema = z
  .strictObject({
    name: name("node pool name"),
    nodeLabel: z
      .strictObject({
        key: z.string().min(1).max(317),
        value: z.string().max(63),
      })
      .meta({
        description: "The node label whose value puts a node in this pool (Run:ai node pools are defined by an admin-chosen node label).",
      }),
    nodes: z
      .int()
      .min(1)
      .max(MAX_NODES)
      .meta({ description: `Nodes in the pool; at most ${MAX_NODES} in the whole blueprint.` }),
    gpuModel: z.enum(GPU_MODEL_IDS),
    gpusPerNode: z.int().min(1).max(16),
    cpuCores: z.int().min(1).max(4096).meta({ description: "Physical CPU cores per node (the datasheet's count)." }),
    // The kubelet reports logical CPUs (cAdvisor's MachineInfo counts every hardware thread): a
    // DGX H100's 2 × 56-core Xeon Platinum 8480C shows 224 (Intel's specification of the 8480+: 56
    // cores, 112 threads), a DGX A100's 2 × 64-core EPYC 7742 256 (AMD's: 64 cores, 128 threads).
    threadsPerCore: z.int().min(1).max(8).default(2).meta({
      description:
        "Hardware threads per core (SMT): the kubelet counts cpuCores × threadsPerCore CPUs (default 2, as on DGX systems; 1 where SMT is off).",
    }),
    memoryGiB: z.int().min(1).max(65_536),
    software: nodeSoftwareSchema,
    // A node's roles are its `node-role.kubernetes.io/<role>` labels; Run:ai's documented ones
    // mark GPU workers, CPU workers and its system nodes (Run:ai 2.24 docs, "Node Roles").
    nodeRoles: z
      .array(
        z.string().regex(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/, {
          message: "expected a label name such as runai-gpu-worker (at most 63 letters, digits, '-', '_' or '.')",
        }),
      )
      .readonly()
      .default([])
      .meta({
        description:
          "The roles the pool's nodes are labelled with (node-role.kubernetes.io/<role>), e.g. runai-gpu-worker as Run:ai's node roles set it; none by default, as on a cluster whose admin set none.",
      }),
    nodeNamePrefix: name("node name prefix")
      .optional()
      .meta({ description: 'Node names are <prefix><index>; default "<pool name>-node-".' }),
  })
  .meta({ description: "A Run:ai node pool: identical nodes sharing a label." });

const departmentQuota = z.strictObject({
  deserved: z.int().min(0).meta({ description: "GPUs the department is guaranteed in this node pool." }),
  overQuotaWeight: z
    .number()
    .min(0)
    .default(1)
    .meta({ description: "Share of idle GPUs the department may borrow relative to other departments; default 1 (equal)." }),
  limit: z.int().min(-1).default(-1).meta({ description: "Maximum GPUs in this node pool; -1 for no limit." }),
});

const projectQuota = z.strictObject({
  deserved: z.int().min(0).meta({ description: "Deserved (guaranteed) GPU quota in this node pool." }),
  // Required: KAI-Scheduler applies no default over-quota weight in code, and Run:ai's UI
  // default is not documented as a number, so a blueprint states it.
  overQuotaWeight: z
    .number()
    .min(0)
    .meta({ description: "Share of idle GPUs this project may borrow, relative to other projects' weights; 0 never borrows." }),
  // -1 (no limit) is the documented default of KAI-Scheduler's queue `limit` (docs/queues/README.md).
  limit: z.int().min(-1).default(-1).meta({ description: "Maximum GPUs in this node pool; -1 for no limit." }),
});

/** Node pools a workload may use, most preferred first (Run:ai's node-pool priority list). */
const nodePoolPreference = (fallback: string) =>
  z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .meta({ description: `Node pools in order of preference; default: ${fallback}.` });

const WORKLOAD_TYPES = ["training", "distributed-training", "interactive", "inference"] as const;

/**
 * Run:ai's restartPolicy and backoffLimit of a workload (control-plane API 2.24 schemas
 * RestartPolicy, BackoffLimit). Always is not modelled: a container restarted forever needs a
 * person to delete the workload, which gpusynth does not simulate.
 */
const restartFields = {
  restartPolicy: z.enum(["Never", "OnFailure"]).default("Never").meta({
    description:
      "Never: a failed container fails the workload. OnFailure: the kubelet restarts it in place after its back-off (10 s doubling to 5 min; CrashLoopBackOff) and the failure recurs, until backoffLimit restarts are spent.",
  }),
  backoffLimit: z
    .int()
    .min(0)
    .max(100)
    .default(6)
    .meta({ description: "Restarts before the workload is marked failed (Run:ai default: 6)." }),
};

/**
 * CPU and memory a workload's pods request per GPU, as Run:ai submits them: what the user asked
 * for, else the cluster's limitRange defaults (runaiconfig spec.limitRange).
 */
const podRequestFields = {
  cpuPerGpu: z
    .number()
    .gt(0)
    .max(1024)
    .optional()
    .meta({ description: "CPU cores each pod requests per GPU it requests; default: limitRange.cpuDefaultRequestGpuFactor." }),
  memoryGiBPerGpu: z
    .number()
    .gt(0)
    .max(65_536)
    .optional()
    .meta({ description: "Memory (GiB) each pod requests per GPU it requests; default: limitRange.memoryDefaultRequestGpuFactorMiB." }),
};

const workloadKindSchema = z
  .strictObject({
    type: z.enum(WORKLOAD_TYPES).meta({
      description: "training and interactive run one pod; distributed-training is a gang of pods (one per node); inference runs one pod.",
    }),
    share: z.number().gt(0).meta({ description: "Relative weight of this kind among the generator's arrivals." }),
    priorityClass: z.string().min(1),
    nodePools: nodePoolPreference("the generator's"),
    image: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "Container image the workload runs: one declared in images (kubelet pull events)." }),
    gpus: cdf(gpuCount, "GPU count").meta({
      description: "CDF of GPUs per workload: [GPUs, cumulative % of workloads]. A workload asks for exactly one of the listed counts.",
    }),
    duration: z.strictObject({
      min: durationSchema.meta({ description: "Shortest run time (the CDF's 0 % point)." }),
      cdf: cdf(durationSchema, "duration").meta({
        description: "CDF of run time: [duration, cumulative % of workloads], interpolated linearly in log-time.",
      }),
    }),
    failure: z
      .strictObject({
        probability: z.number().min(0).max(1),
        earlyShare: z.number().min(0).max(1).meta({ description: "Share of failures that happen within earlyWithin of start." }),
        earlyWithin: durationSchema,
      })
      .optional()
      .meta({ description: "Chance the workload fails while running (outcomes are exclusive: failure + cancel ≤ 1)." }),
    cancel: z
      .strictObject({
        probability: z.number().min(0).max(1).meta({ description: "Probability the user stops the workload while it runs." }),
      })
      .optional(),
    pendingPatience: durationSchema.optional().meta({
      description: "The submitting user deletes the workload if it has not started after this long.",
    }),
    ...podRequestFields,
    ...restartFields,
  })
  .superRefine((kind, ctx) => {
    const total = (kind.failure?.probability ?? 0) + (kind.cancel?.probability ?? 0);
    if (total > 1) {
      ctx.addIssue({
        code: "custom",
        path: ["cancel", "probability"],
        message: "expected failure and cancel probabilities that add up to at most 1",
        input: total,
      });
    }
  });

const generatorSchema = z.strictObject({
  name: name("workload generator name")
    .max(40)
    .meta({ description: "Workloads are named <name>-<n>; keep it short so pod names stay valid." }),
  project: z.string().min(1),
  nodePools: nodePoolPreference("the project's node pools in declared order"),
  arrivals: z.strictObject({
    perDay: z.number().gt(0).max(1_000_000).meta({ description: "Mean weekday submissions per day." }),
    diurnal: z
      .strictObject({
        peakHour: z.number().min(0).lt(24).meta({ description: "Local hour of the busiest submission rate." }),
        peakToMean: z.number().min(1).max(2).meta({ description: "Peak hourly rate divided by the daily mean." }),
      })
      .optional(),
    weekendFactor: z.number().min(0).max(10).default(1).meta({ description: "Rate multiplier on Saturdays and Sundays." }),
  }),
  mix: z.array(workloadKindSchema).min(1),
});

const submissionSchema = z
  .strictObject({
    at: durationSchema.meta({ description: "Submission time after the simulation start." }),
    name: name("workload name").max(40),
    project: z.string().min(1),
    user: z.string().min(1).max(253).optional().meta({ description: "Submitting user; default: the project's first user." }),
    type: z.enum(WORKLOAD_TYPES),
    priorityClass: z.string().min(1),
    image: z.string().min(1).optional().meta({ description: "Container image: one declared in images." }),
    gpus: gpuCount,
    runFor: durationSchema.meta({ description: "Run time until the workload ends as `ending` says." }),
    ending: z.enum(["complete", "fail", "cancel", "oom"]).default("complete").meta({
      description:
        "complete: it succeeds; fail: its container exits with an error; cancel: its user deletes it; oom: its container's memory grows until it reaches memoryLimitGiB and the kernel's OOM killer kills it (OOMKilled), after each start.",
    }),
    nodePools: nodePoolPreference("the project's node pools in declared order"),
    pendingPatience: durationSchema.optional(),
    ...podRequestFields,
    cpuLimitPerGpu: z.number().gt(0).max(1024).optional().meta({
      description:
        "CPU limit (cores) of each pod's container per GPU it requests, as Run:ai sets a workload's CPU limit (none by default).",
    }),
    dataLoaderCpuPerGpu: z.number().gt(0).max(1024).optional().meta({
      description:
        "Training: the CPU (cores per GPU) its data loading needs to keep its GPUs fed. Above cpuLimitPerGpu the loader is throttled at the limit and the GPUs wait for data in every step (the share 1 − limit/need).",
    }),
    memoryLimitGiB: z.number().gt(0).max(65_536).optional().meta({
      description:
        "Memory limit (GiB) of each pod's container, as Run:ai sets a workload's memory limit (none by default: Run:ai's pods only request memory).",
    }),
    ...restartFields,
  })
  .superRefine((submission, context) => {
    if (submission.cpuLimitPerGpu !== undefined && submission.cpuPerGpu !== undefined && submission.cpuLimitPerGpu < submission.cpuPerGpu)
      context.addIssue({
        code: "custom",
        path: ["cpuLimitPerGpu"],
        message: `expected a CPU limit at least the request (cpuPerGpu ${submission.cpuPerGpu}), found ${submission.cpuLimitPerGpu}: Kubernetes refuses a limit below the request`,
      });
    if (submission.dataLoaderCpuPerGpu !== undefined && submission.type !== "training" && submission.type !== "distributed-training")
      context.addIssue({
        code: "custom",
        path: ["dataLoaderCpuPerGpu"],
        message: `expected dataLoaderCpuPerGpu only on training, found it on type ${submission.type}`,
      });
    if (submission.ending === "oom" && submission.memoryLimitGiB === undefined)
      context.addIssue({
        code: "custom",
        path: ["memoryLimitGiB"],
        message: "expected a memory limit (GiB) with ending: oom: a container is OOM-killed when its memory reaches its limit",
      });
  })
  .meta({ description: "One workload submitted at a fixed time: for scenarios that must happen exactly when declared." });

const knownXid = z.int().refine((xid) => KNOWN_XIDS.includes(xid), {
  message: `expected an XID from the catalogue (${KNOWN_XIDS.join(", ")})`,
});

/** Where and when a fault is declared: a node at a time after the start (fresh schemas per use). */
const onNode = () => ({ at: durationSchema.meta({ description: "Time after the simulation start." }), node: z.string().min(1) });
/** …and one of its GPUs. */
const onGpu = () => ({ ...onNode(), gpu: z.int().min(0) });

const faultsSchema = z.strictObject({
  hazards: z
    .array(
      z.strictObject({
        category: z.string().min(1).meta({ description: "What fails, e.g. gpu, hbm, gsp (Llama 3 Table 5 categories)." }),
        perGpuDay: z.number().min(0).max(1).meta({ description: "Interruptions per GPU per day." }),
        xid: knownXid,
      }),
    )
    .default([]),
  injections: z.array(z.strictObject({ ...onGpu(), xid: knownXid })).default([]),
  memoryPressure: z.array(z.strictObject(onNode())).default([]).meta({
    description:
      "Host memory runs out on a node at a fixed time: the kubelet crosses its hard eviction threshold (memory.available<100Mi), reports MemoryPressure and evicts one pod (lowest priority, then most memory).",
  }),
  powerCaps: z
    .array(
      z.strictObject({
        ...onGpu(),
        watts: z.number().positive().meta({ description: "The enforced power limit while it lasts (W)." }),
        for: durationSchema.meta({ description: "How long the limit holds." }),
      }),
    )
    .default([])
    .meta({
      description:
        "A GPU's enforced power limit drops for a while (a power supply fault asserting the power brake, the BMC capping the node): its SM clock falls until its power fits, and the job on it runs at its pace; every rank of a distributed job waits on the slowest (a straggler).",
    }),
  gpuResetTime: durationSchema.default(5 * 60_000),
  nodeRebootDelay: durationSchema
    .default(30 * 60_000)
    .meta({ description: "How long a node with a GPU off the bus is cordoned before it reboots." }),
  nodeRebootTime: durationSchema.default(10 * 60_000),
  devicePluginDisableHealthchecks: z
    .string()
    .regex(/^(all|.*xids.*|\s*\d+\s*(,\s*\d+\s*)*|)$/i, {
      message: 'expected DP_DISABLE_HEALTHCHECKS\'s forms: "all", "xids", or a comma-separated list of XIDs',
    })
    .default("")
    .meta({
      description:
        'NVIDIA k8s-device-plugin\'s DP_DISABLE_HEALTHCHECKS: "all" or "xids" stops it marking GPUs unhealthy; a comma-separated list of XIDs is ignored in addition to the application errors (13, 31, 43, 45, 68, 109). Default: unset.',
    }),
});

/** The NVIDIA driver in dcgm-exporter's own sample output (its 4.5.3-4.8.2 README). */
const DEFAULT_DRIVER_VERSION = "550.163.01";

/** A Prometheus job name that is also one URL path segment ("." and ".." are not). */
const JOB_NAME = /^(?!\.{1,2}$)[A-Za-z0-9_.-]+$/;
/** An absolute URL path (RFC 3986 pchar and "/") without "." or ".." segments. */
const SCRAPE_PATH = /^(?!.*\/\.{1,2}(\/|$))\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/;

/**
 * Fields of dcgm-exporter's default counters file that ship commented out
 * (etc/default-counters.csv @4.5.3-4.8.2) and that gpusynth can emit when a blueprint enables them,
 * as a custom counters file (--collectors) would.
 */
export const OPTIONAL_DCGM_COUNTERS = ["DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_THERMAL_VIOLATION"] as const;
export type OptionalDcgmCounter = (typeof OPTIONAL_DCGM_COUNTERS)[number];

/** The most kube-state-metrics shards a blueprint may run: each is a pod and two scrape targets. */
export const MAX_KSM_SHARDS = 256;

const telemetrySchema = z.strictObject({
  dcgmCounters: z.array(z.enum(OPTIONAL_DCGM_COUNTERS)).default([]).meta({
    description:
      "dcgm-exporter fields beyond its default counters, as a custom counters file enables them: the time the power cap (DCGM_FI_DEV_POWER_VIOLATION) or a thermal limit (DCGM_FI_DEV_THERMAL_VIOLATION) held the clocks. Default: none.",
  }),
  driverVersion: z
    .string()
    .regex(/^\d+\.\d+(\.\d+)?$/, { message: 'a driver version such as "550.163.01"' })
    .default(DEFAULT_DRIVER_VERSION)
    .meta({ description: "NVIDIA driver version on every node (dcgm-exporter's DCGM_FI_DRIVER_VERSION label)." }),
  schedulerVerbosity: z
    .int()
    .min(0)
    .max(10)
    .default(3)
    .meta({ description: "KAI-Scheduler --v: which scheduler log lines are written (default 3, the scheduler's own default)." }),
  nodeExporter: z.boolean().default(false).meta({
    description:
      "Whether the cluster's monitoring stack runs node-exporter on every node, as kube-prometheus deploys it (its DaemonSet in `monitoring`, job node-exporter). Its per-CPU series (8 modes for every logical CPU: 1,792 on a DGX H100) outnumber a node's GPU series many times over. Default: off.",
  }),
  kubeStateMetrics: z
    .strictObject({
      shards: z.int().min(1).max(MAX_KSM_SHARDS).default(1).meta({
        description:
          "How many kube-state-metrics instances share the cluster's objects (its horizontal sharding, deployed as its examples/autosharding StatefulSet `kube-state-metrics` with one pod per shard). Each instance serves the objects whose UID hashes to it, as a target of its own (job kube-state-metrics, its pod's address). Default: 1, the standard manifests' one Deployment replica.",
      }),
    })
    .default({ shards: 1 })
    .meta({
      description:
        "How the cluster runs kube-state-metrics. A cluster of thousands of nodes shards it: one instance's /metrics grows with every pod and node, past what a scrape reads within Prometheus' default 10 s timeout.",
    }),
  serviceMonitors: z.boolean().default(false).meta({
    description:
      "Whether the collector's prometheus receiver finds the exporters through the ServiceMonitors the cluster deploys (the OpenTelemetry Operator's Target Allocator with prometheusCR): kube-prometheus' for the kubelet's cAdvisor endpoint and node-exporter, the GPU Operator's for dcgm-exporter. Their pushed series then carry the labels those give (namespace, service, endpoint, pod, container, node, metrics_path; dcgm-exporter's own pod, namespace and container become exported_*), which kube-prometheus' rules and dashboards select on. Default: off (every series as its exporter writes it).",
  }),
  runai: z
    .strictObject({
      // Targets are served at /targets/<job>/<host>:<port><path>, so the job must be one URL
      // path segment: no "/", no "." or ".." (which a client resolves away), nothing to escape.
      job: z
        .string()
        .max(63)
        .regex(JOB_NAME, { message: 'a job name of letters, digits, "_", "." and "-" (one URL path segment), not "." or ".."' })
        .meta({ description: "Prometheus job name of the scrape that collects the Run:ai metric families." }),
      port: z.int().min(1).max(65_535),
      // The exporter's own HTTP path (a collector scrapes it there): an absolute URL path of
      // RFC 3986 path characters, without dot segments, a query or a fragment.
      path: z
        .string()
        .max(256)
        .regex(SCRAPE_PATH, { message: 'an absolute URL path such as "/metrics", without "." or ".." segments, "?" or "#"' })
        .default("/metrics"),
    })
    .optional()
    .meta({
      description:
        "Where the Run:ai families are scraped from. Run:ai documents no scrape job, port or path for them, so a blueprint that wants them declares one; without it they are not emitted.",
    }),
});

/** RFC 6750's b64token, at least 16 characters long. */
export const BEARER_TOKEN = /^[A-Za-z0-9._~+/-]{16,}=*$/;

/**
 * The Run:ai control-plane API that `gpusynth run --api` serves. Its credentials are secrets:
 * shipped blueprints leave them out and the run takes them from GPUSYNTH_API_TOKEN (and
 * GPUSYNTH_API_CLIENT_ID / GPUSYNTH_API_CLIENT_SECRET) or generates a token and prints it.
 */
const controlPlaneSchema = z
  .strictObject({
    token: z
      .string()
      .regex(BEARER_TOKEN, { message: "a bearer token: at least 16 letters, digits or -._~+/ (RFC 6750 b64token)" })
      .optional()
      .meta({ description: "Bearer token every API request must carry (Authorization: Bearer <token>)." }),
    serviceAccount: z
      .strictObject({ clientId: z.string().min(1), clientSecret: z.string().min(8) })
      .optional()
      .meta({ description: "Client credentials the token endpoints (POST /api/v1/token, /api/v2/token) exchange for the token." }),
    // Run:ai's own metrics store keeps far longer; a day covers the UI's default ranges
    // (last hour … last day) while bounding what an emulator holds in memory.
    retention: durationBetween(60_000, 31 * 86_400_000, "a retention between 1m and 31d")
      .default(86_400_000)
      .meta({ description: "How far back the Metrics API can answer (default 24h)." }),
  })
  .meta({ description: "The Run:ai control-plane Metrics, Telemetry and read API served by `gpusynth run --api`." });

/** What `gpusynth calibrate` measures; each may carry a tolerance band in `calibration.targets`. */
export const CALIBRATION_METRICS = {
  gpuWorkloadsPerGpuDay: "GPU workloads submitted per GPU per day",
  diurnalPeakToMean: "busiest hour's submissions ÷ mean hourly submissions (weekdays)",
  gpusPerWorkloadMedian: "GPUs per workload, median",
  gpusPerWorkloadP90: "GPUs per workload, 90th percentile",
  durationMedianSeconds: "run time of ended workloads, median (s)",
  durationP90Seconds: "run time of ended workloads, 90th percentile (s)",
  waitMedianSeconds: "wait from submission to first start, median (s)",
  waitMeanSeconds: "wait from submission to first start, mean (s)",
  saturatedWaitMeanSeconds: "mean wait in saturated projects (mean allocation ≥ 85 % of deserved quota) (s)",
  completedShare: "share of ended workloads that completed",
  cancelledShare: "share of ended workloads that were cancelled",
  failedShare: "share of ended workloads that failed",
  preemptedShare: "share of preemptible workloads preempted at least once",
  idleAllocatedShare: "share of allocated-GPU samples at 0 % utilisation",
  hardwareInterruptionsPerGpuDay: "GPU faults per GPU per day",
  meanAllocation: "mean share of GPUs allocated",
} as const;
export type CalibrationMetric = keyof typeof CALIBRATION_METRICS;

const band = z
  .strictObject({ min: z.number().optional(), max: z.number().optional() })
  .refine((b) => b.min !== undefined || b.max !== undefined, { message: "expected a min, a max or both" })
  .refine((b) => b.min === undefined || b.max === undefined || b.min <= b.max, { message: "expected min ≤ max" });

const calibrationSchema = z
  .strictObject({
    days: z
      .number()
      .gt(0)
      .max(365)
      .default(7)
      .meta({ description: "Simulated days `gpusynth calibrate` measures by default, after the warm-up." }),
    warmup: durationSchema
      .default(86_400_000)
      .meta({ description: "Simulated time run before measuring, so long-lived workloads fill the cluster as in a trace's steady state." }),
    targets: z
      .partialRecord(z.enum(Object.keys(CALIBRATION_METRICS) as [CalibrationMetric, ...CalibrationMetric[]]), band)
      .default({})
      .meta({ description: "Tolerance band per measured rate; each should name its real-world basis in a comment." }),
  })
  .meta({ description: "What the blueprint claims to reproduce, checked by `gpusynth calibrate`." });

export const blueprintSchema = z
  .strictObject({
    cluster: z.strictObject({
      name: name("cluster name"),
      clusterId: z.uuid(),
    }),
    seed: z.int().min(0).max(0xffff_ffff),
    time: z.strictObject({
      start: z.iso
        .datetime({ offset: true })
        .transform((text, ctx) => {
          const ms = Date.parse(text);
          if (!(ms >= EARLIEST_START_MS && ms < LATEST_START_MS)) {
            ctx.issues.push({
              code: "custom",
              message:
                "expected a start from 1970-01-01T00:00:00Z (OTLP timestamps count nanoseconds since the Unix epoch) to before 2200-01-01T00:00:00Z (they end at 2262-04-11 in int64 nanoseconds, and a run needs room)",
              input: text,
            });
            return z.NEVER;
          }
          return ms;
        })
        .meta({
          description: "Simulated start time, ISO 8601 with offset, e.g. 2026-01-05T00:00:00Z; from 1970 to before 2200 (OTLP time range).",
        }),
      utcOffsetHours: z
        .number()
        .min(-12)
        .max(14)
        .default(0)
        .meta({ description: "Users' local time zone, for the diurnal and weekly arrival shape." }),
      // KAI-Scheduler's default period is 1s. At least 100ms: a real cycle takes tens of
      // milliseconds, and every cycle (idle ones too) writes scheduler log lines, so 100ms is
      // already ten times the default's log volume (0 would stop the clock). At most 1m: slower
      // cycles leave pods pending for minutes, which no KAI-Scheduler deployment does.
      schedulingPeriod: durationBetween(100, 60_000, "a scheduling period from 100ms to 1m (KAI-Scheduler's default: 1s)")
        .default(1_000)
        .meta({ description: "Time between scheduling cycles: 100ms to 1m (KAI-Scheduler's default: 1s)." }),
      // Kubernetes' default terminationGracePeriodSeconds (k8s.io/api core/v1 types.go
      // DefaultTerminationGracePeriodSeconds = 30 @ v0.30.3): a preempted pod's containers get
      // SIGTERM and are killed when it runs out; gpusynth's victims use it all (a training process
      // that does not stop on SIGTERM), so the preemptor binds that long after its victims' eviction.
      terminationGracePeriod: durationBetween(0, 3_600_000, "a grace period from 0s to 1h").default(30_000).meta({
        description:
          "How long a preempted pod takes to terminate, holding its GPUs, before the preemptor pipelined onto them binds (default 30s, Kubernetes' terminationGracePeriodSeconds).",
      }),
      // Assumption: finished pods are cleaned up within the hour (Kubernetes itself keeps them
      // until their owner is deleted or kube-controller-manager's --terminated-pod-gc-threshold
      // of 12500 pods is reached).
      finishedPodRetention: durationSchema
        .default(3_600_000)
        .meta({ description: "How long a Succeeded or Failed pod stays in the API before it is deleted (default 1h)." }),
      // The shipped clusters reach their working regime within a simulated day (allocation at
      // 24 h: lab 41 %, enterprise 63 %, platform 64 %); a scenario whose story starts at
      // time.start sets 0s. At most 30 days: a month of the largest blueprint is minutes of CPU.
      liveWarmup: durationBetween(0, 30 * 86_400_000, "a warm-up from 0s to 30d")
        .default(86_400_000)
        .meta({
          description:
            "Simulated time a live run runs before it serves, so the first scrape shows a working cluster (default 1d; 0s: start empty at time.start). gpusynth run --warmup overrides it.",
        }),
    }),
    priorityClasses: z
      .array(z.strictObject({ name: name("priority class name"), value: z.int().min(-1_000_000_000).max(1_000_000_000) }))
      .default([])
      .meta({ description: "PriorityClasses besides the built-in train, build-preemptible, interactive-preemptible, build, inference." }),
    nodePools: z.array(nodePoolSchema).min(1),
    departments: z
      .array(
        z.strictObject({
          name: name("department name"),
          nodePools: z.record(z.string(), departmentQuota),
        }),
      )
      .min(1),
    projects: z
      .array(
        z.strictObject({
          name: name("project name"),
          department: z.string().min(1),
          users: z.array(z.string().min(1).max(253)).min(1),
          nodePools: z.record(z.string(), projectQuota),
        }),
      )
      .min(1),
    images: z
      .array(
        z.strictObject({
          name: z.string().min(1).max(512).meta({ description: "Image reference, e.g. registry/repository:tag." }),
          sizeBytes: z.int().min(1).meta({ description: "Image size the kubelet reports after a pull." }),
          pullTime: durationSchema.meta({ description: "How long a pull takes on a node that does not have the image yet." }),
          defaultFor: z.array(z.enum(WORKLOAD_TYPES)).default([]).meta({
            description: "Workload types that run this image when their kind or submission names none (each type at most once).",
          }),
        }),
      )
      .default([])
      .meta({
        description: "Container images workloads run; a node pulls an image the first time a pod needs it (imagePullPolicy IfNotPresent).",
      }),
    // NVIDIA Run:ai advanced cluster configuration (run-ai/docs @86056401,
    // saas/advanced-setup/advanced-cluster-configurations.md): spec.limitRange.cpuDefaultRequestGpuFactor
    // defaults to 100 (millicores) and memoryDefaultRequestGpuFactor to 100Mi per GPU; the
    // matching limit factors have no default, so no CPU or memory limit is set.
    limitRange: z
      .strictObject({
        cpuDefaultRequestGpuFactor: z
          .number()
          .gt(0)
          .max(1024)
          .default(0.1)
          .meta({ description: "CPU cores requested per GPU (Run:ai default: 0.1)." }),
        memoryDefaultRequestGpuFactorMiB: z
          .number()
          .gt(0)
          .max(67_108_864)
          .default(100)
          .meta({ description: "Memory (MiB) requested per GPU (Run:ai default: 100)." }),
      })
      .default({ cpuDefaultRequestGpuFactor: 0.1, memoryDefaultRequestGpuFactorMiB: 100 })
      .meta({
        description:
          "Run:ai's default CPU and memory requests per GPU, for workloads that declare none (runaiconfig spec.limitRange); no CPU or memory limits are set.",
      }),
    workloads: z.array(generatorSchema).default([]),
    submissions: z.array(submissionSchema).default([]),
    telemetry: telemetrySchema.default({
      dcgmCounters: [],
      driverVersion: DEFAULT_DRIVER_VERSION,
      schedulerVerbosity: 3,
      nodeExporter: false,
      kubeStateMetrics: { shards: 1 },
      serviceMonitors: false,
    }),
    controlPlane: controlPlaneSchema.default({ retention: 86_400_000 }),
    calibration: calibrationSchema.default({ days: 7, warmup: 86_400_000, targets: {} }),
    faults: faultsSchema.default({
      hazards: [],
      injections: [],
      memoryPressure: [],
      powerCaps: [],
      gpuResetTime: 300_000,
      nodeRebootDelay: 1_800_000,
      nodeRebootTime: 600_000,
      devicePluginDisableHealthchecks: "",
    }),
  })
  .meta({ title: "gpusynth blueprint", description: "A simulated Kubernetes GPU cluster scheduled by Run:ai." });

export type Blueprint = z.output<typeof blueprintSchema>;
export type BlueprintInput = z.input<typeof blueprintSchema>;
export type NodePool = Blueprint["nodePools"][number];
export type Department = Blueprint["departments"][number];
export type Project = Blueprint["projects"][number];
export type WorkloadGenerator = Blueprint["workloads"][number];
export type WorkloadKind = WorkloadGenerator["mix"][number];
export type WorkloadType = (typeof WORKLOAD_TYPES)[number];
export type Submission = Blueprint["submissions"][number];
/** How a workload's run ends if nothing (preemption, a fault) ends it first. */
export type Ending = Submission["ending"];
export type Faults = Blueprint["faults"];
export type Cdf = ReadonlyArray<readonly [number, number]>;
