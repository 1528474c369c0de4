/**
 * Rules that relate one part of a blueprint to another. The schema has already checked each
 * part on its own; here we check that names resolve, quotas nest (project ≤ department, limit
 * ≥ deserved), and that every workload a generator can produce can run somewhere.
 */
import { GPU_MODELS, POWER_CAP_FRACTION } from "./gpu-models.js";
import { declaredIn } from "./name-references.js";
import { BUILT_IN_PRIORITY_CLASSES, isPreemptible } from "./priority-classes.js";
import { type BlueprintProblem, describeValue, type YamlPath } from "./problems.js";
import { type Blueprint, MAX_GPUS, MAX_NODES, type NodePool, type Project, type WorkloadType } from "./schema.js";
import { nodeCpus, nodeMemoryBytes, nodeName, podShape } from "./shape.js";

/** What every rule reads: the blueprint, its names resolved, and where problems go. */
interface Context {
  readonly bp: Blueprint;
  readonly pools: ReadonlyMap<string, NodePool>;
  readonly projects: ReadonlyMap<string, Project>;
  /** Built-in priority classes and the blueprint's own, by name. */
  readonly priorities: ReadonlyMap<string, number>;
  error(path: YamlPath, expected: string, found: string): void;
  warning(path: YamlPath, expected: string, found: string): void;
  /** Reports `pool` at `path` unless it is a declared node pool. */
  unknownPool(path: YamlPath, pool: string): void;
}

/** The rules, in the order their problems are reported. */
const RULES: ReadonlyArray<(c: Context) => void> = [
  clusterSize,
  kubeletSkew,
  uniqueNames,
  priorityClassNames,
  departmentQuotas,
  projectQuotas,
  departmentsCoverTheirProjects,
  poolOversubscription,
  defaultImages,
  generatedWorkloads,
  submittedWorkloads,
  faultTargets,
];

export function crossReferenceProblems(bp: Blueprint): BlueprintProblem[] {
  const problems: BlueprintProblem[] = [];
  const pools = new Map(bp.nodePools.map((pool) => [pool.name, pool]));
  const priorities = new Map(BUILT_IN_PRIORITY_CLASSES.map((c) => [c.name, c.value]));
  for (const c of bp.priorityClasses) priorities.set(c.name, c.value);
  const error = (path: YamlPath, expected: string, found: string) => problems.push({ severity: "error", path, expected, found });
  const context: Context = {
    bp,
    pools,
    projects: new Map(bp.projects.map((p) => [p.name, p])),
    priorities,
    error,
    warning: (path, expected, found) => problems.push({ severity: "warning", path, expected, found }),
    unknownPool: (path, pool) => {
      if (!pools.has(pool)) error(path, declaredIn("node pool", "nodePools", [...pools.keys()]), `"${pool}"`);
    },
  };
  for (const rule of RULES) rule(context);
  return problems;
}

/** Totals the schema cannot see pool by pool (bounds and their basis: MAX_NODES in schema.ts). */
function clusterSize({ bp, error }: Context): void {
  const totalNodes = bp.nodePools.reduce((sum, pool) => sum + pool.nodes, 0);
  const totalGpus = bp.nodePools.reduce((sum, pool) => sum + pool.nodes * pool.gpusPerNode, 0);
  const poolCount = `${bp.nodePools.length} node pool${bp.nodePools.length === 1 ? "" : "s"}`;
  const beyond =
    'every process simulates the whole cluster and emits one shard of it, docs/emission.md "Shards"; split a larger cluster into several blueprints and run each on its own';
  if (totalNodes > MAX_NODES)
    error(["nodePools"], `at most ${MAX_NODES} nodes in one blueprint (${beyond})`, `${totalNodes} nodes in ${poolCount}`);
  if (totalGpus > MAX_GPUS)
    error(["nodePools"], `at most ${MAX_GPUS} GPUs in one blueprint (${beyond})`, `${totalGpus} GPUs in ${poolCount}`);
}

/**
 * Kubernetes' version skew policy (kubernetes.io/releases/version-skew-policy): a kubelet may be
 * up to three minor versions older than the API server, never newer; the API server is at least
 * the newest kubelet, so the pools' kubelets lie within three minor versions of each other.
 */
function kubeletSkew({ bp, error }: Context): void {
  const minor = (version: string) => Number(version.split(".")[1]);
  const newest = Math.max(...bp.nodePools.map((pool) => minor(pool.software.kubeletVersion)));
  bp.nodePools.forEach((pool, index) => {
    const version = pool.software.kubeletVersion;
    if (newest - minor(version) > 3)
      error(
        ["nodePools", index, "software", "kubeletVersion"],
        `a kubelet at most three minor versions older than the newest (v1.${newest}): the version skew policy allows no more`,
        `"${version}"`,
      );
  });
}

/** Names are unique within each section. */
function uniqueNames({ bp, error }: Context): void {
  const unique = <T extends { name: string }>(items: readonly T[], section: string) => {
    const seen = new Map<string, number>();
    items.forEach((item, index) => {
      const first = seen.get(item.name);
      if (first !== undefined)
        error([section, index, "name"], `a name not used before in ${section}`, `"${item.name}", already at ${section}[${first}]`);
      else seen.set(item.name, index);
    });
  };
  unique(bp.nodePools, "nodePools");
  unique(bp.departments, "departments");
  unique(bp.projects, "projects");
  unique(bp.workloads, "workloads");
  unique(bp.submissions, "submissions");
  unique(bp.images, "images");
  unique(bp.priorityClasses, "priorityClasses");
}

/** A declared priority class does not redefine a built-in one. */
function priorityClassNames({ bp, error }: Context): void {
  const builtIn = new Set(BUILT_IN_PRIORITY_CLASSES.map((c) => c.name));
  bp.priorityClasses.forEach((c, index) => {
    if (builtIn.has(c.name)) error(["priorityClasses", index, "name"], "a name that is not a built-in priority class", `"${c.name}"`);
  });
}

/** A quota's limit, where set, is at least its deserved quota. */
function limitCoversDeserved(error: Context["error"], path: YamlPath, quota: { deserved: number; limit: number }): void {
  if (quota.limit >= 0 && quota.limit < quota.deserved) {
    error([...path, "limit"], `a limit of at least the deserved quota (${quota.deserved}) or -1`, String(quota.limit));
  }
}

/** Departments' quotas name declared pools, with limits that cover their deserved quotas. */
function departmentQuotas({ bp, error, unknownPool }: Context): void {
  bp.departments.forEach((dept, d) => {
    for (const [pool, quota] of Object.entries(dept.nodePools)) {
      unknownPool(["departments", d, "nodePools", pool], pool);
      limitCoversDeserved(error, ["departments", d, "nodePools", pool], quota);
    }
  });
}

/** Projects belong to a declared department and hold quota in at least one declared pool. */
function projectQuotas({ bp, error, unknownPool }: Context): void {
  const departments = new Set(bp.departments.map((d) => d.name));
  bp.projects.forEach((project, p) => {
    if (!departments.has(project.department)) {
      error(
        ["projects", p, "department"],
        declaredIn(
          "department",
          "departments",
          bp.departments.map((d) => d.name),
        ),
        `"${project.department}"`,
      );
    }
    if (Object.keys(project.nodePools).length === 0) {
      error(["projects", p, "nodePools"], "quota in at least one node pool", "an empty mapping");
    }
    for (const [pool, quota] of Object.entries(project.nodePools)) {
      unknownPool(["projects", p, "nodePools", pool], pool);
      limitCoversDeserved(error, ["projects", p, "nodePools", pool], quota);
    }
  });
}

/**
 * Run:ai recommends, without enforcing, that a department's quota cover the sum of its projects'
 * per node pool: "A Department's quota supersedes the total of the Project quotas in the
 * Department, so it is recommended that a Department's quota be the total, or more than of all
 * the Project quotas" (NVIDIA Run:ai REST API reference, Departments). A warning, then, on the
 * department whose quota falls short: its projects' deserved quotas are not all guaranteed.
 */
function departmentsCoverTheirProjects({ bp, pools, warning }: Context): void {
  bp.departments.forEach((dept, d) => {
    for (const pool of pools.keys()) {
      const members = bp.projects.filter((p) => p.department === dept.name && p.nodePools[pool] !== undefined);
      const sum = members.reduce((total, p) => total + (p.nodePools[pool]?.deserved ?? 0), 0);
      if (sum === 0) continue;
      const deptQuota = dept.nodePools[pool];
      const detail = members.map((p) => `${p.name} ${p.nodePools[pool]?.deserved}`).join(", ");
      if (deptQuota === undefined) {
        warning(
          ["departments", d, "nodePools"],
          `a quota for node pool "${pool}" of at least ${sum} GPUs (its projects' deserved: ${detail})`,
          "no quota for that pool",
        );
      } else if (deptQuota.deserved < sum) {
        warning(
          ["departments", d, "nodePools", pool, "deserved"],
          `at least the sum of its projects' deserved quotas, ${sum} (${detail})`,
          String(deptQuota.deserved),
        );
      }
    }
  });
}

/** Quotas may over-subscribe a pool (Run:ai allows it), but then "deserved" is not guaranteed. */
function poolOversubscription({ bp, pools, warning }: Context): void {
  for (const [poolName, pool] of pools) {
    const capacity = pool.nodes * pool.gpusPerNode;
    const deserved = bp.departments.reduce((total, d) => total + (d.nodePools[poolName]?.deserved ?? 0), 0);
    if (deserved > capacity) {
      warning(
        ["nodePools", bp.nodePools.indexOf(pool)],
        `departments' deserved quotas within the pool's ${capacity} GPUs`,
        `${deserved} GPUs deserved in total`,
      );
    }
  }
}

/** The project a workload names, or undefined after reporting it. */
function projectOf({ bp, projects, error }: Context, path: YamlPath, name: string): Project | undefined {
  const project = projects.get(name);
  if (project === undefined)
    error(
      path,
      declaredIn(
        "project",
        "projects",
        bp.projects.map((p) => p.name),
      ),
      `"${name}"`,
    );
  return project;
}

/** A workload's declared node pools must exist and hold a quota of its project. */
function checkPoolList(c: Context, project: Project, path: YamlPath, declared: readonly string[] | undefined): void {
  (declared ?? []).forEach((pool, i) => {
    c.unknownPool([...path, i], pool);
    if (c.pools.has(pool) && project.nodePools[pool] === undefined) {
      c.error(
        [...path, i],
        `a node pool in which project "${project.name}" has a quota (${Object.keys(project.nodePools).join(", ") || "none"})`,
        `"${pool}"`,
      );
    }
  });
}

/** Each workload type has at most one default image. */
function defaultImages({ bp, error }: Context): void {
  const claimed = new Map<string, string>();
  bp.images.forEach((image, i) => {
    image.defaultFor.forEach((type, k) => {
      const earlier = claimed.get(type);
      if (earlier !== undefined)
        error(
          ["images", i, "defaultFor", k],
          `a workload type no other image is the default for ("${type}" already runs "${earlier}")`,
          `"${type}"`,
        );
      else claimed.set(type, image.name);
    });
  });
}

/** A workload's image must be declared in images. */
function checkImage({ bp, error }: Context, path: YamlPath, image: string | undefined): void {
  const images = bp.images.map((i) => i.name);
  if (image !== undefined && !images.includes(image)) {
    error(path, `an image declared in images (${images.map((i) => `"${i}"`).join(", ") || "none declared"})`, `"${image}"`);
  }
}

/** Every GPU count a workload can ask for must fit some pool it may use, within quota rules. */
function checkFits(
  c: Context,
  project: Project,
  chosenPools: readonly string[],
  kind: { path: YamlPath; type: WorkloadType; priorityClass: string; gpus: ReadonlyArray<{ gpus: number; path: YamlPath }> },
): void {
  const priority = c.priorities.get(kind.priorityClass);
  if (priority === undefined) {
    c.error([...kind.path, "priorityClass"], `a priority class (${[...c.priorities.keys()].join(", ")})`, `"${kind.priorityClass}"`);
  }
  const usable = usablePools(c, project, chosenPools);
  if (usable.length === 0) return;
  for (const { gpus, path } of kind.gpus) {
    const fits = usable.some((pool) => {
      const quota = project.nodePools[pool.name];
      if (quota === undefined || podShape(kind.type, gpus, pool) === undefined) return false;
      if (quota.limit >= 0 && gpus > quota.limit) return false;
      return priority === undefined || isPreemptible(priority) || gpus <= quota.deserved;
    });
    if (!fits) c.error(path, neverFitsExplanation(kind.type, usable, project.nodePools, priority), describeValue(gpus));
  }
}

/** The declared pools among those chosen in which the project has a quota. */
function usablePools(c: Context, project: Project, chosenPools: readonly string[]): NodePool[] {
  return chosenPools.flatMap((n) => {
    const pool = c.pools.get(n);
    return pool !== undefined && project.nodePools[n] !== undefined ? [pool] : [];
  });
}

/**
 * A pod's CPU and memory per GPU must fit a GPU's share of a node in every pool it may use: a
 * node full of such pods then never runs out of CPU or memory before GPUs, which is why the
 * scheduler may place by GPUs alone (docs/scheduling.md).
 */
function checkRequests(
  c: Context,
  path: YamlPath,
  usable: readonly NodePool[],
  requests: { readonly cpuPerGpu?: number | undefined; readonly memoryGiBPerGpu?: number | undefined },
): void {
  const defaults = c.bp.limitRange;
  const checks = [
    {
      field: requests.cpuPerGpu === undefined ? ["limitRange", "cpuDefaultRequestGpuFactor"] : [...path, "cpuPerGpu"],
      value: requests.cpuPerGpu ?? defaults.cpuDefaultRequestGpuFactor,
      share: (pool: NodePool) => nodeCpus(pool) / pool.gpusPerNode,
      unit: "CPU cores",
    },
    {
      field: requests.memoryGiBPerGpu === undefined ? ["limitRange", "memoryDefaultRequestGpuFactorMiB"] : [...path, "memoryGiBPerGpu"],
      value: requests.memoryGiBPerGpu ?? defaults.memoryDefaultRequestGpuFactorMiB / 1024,
      // What the kubelet reports (the kernel's MemTotal), not the installed memory.
      share: (pool: NodePool) => nodeMemoryBytes(pool) / 2 ** 30 / pool.gpusPerNode,
      unit: "GiB of memory",
    },
  ];
  for (const { field, value, share, unit } of checks) {
    const tight = usable.find((pool) => value > share(pool));
    if (tight !== undefined)
      c.error(
        field as YamlPath,
        `at most ${describeValue(share(tight))} ${unit} per GPU, a GPU's share of a node in node pool "${tight.name}" (${unit} per node / GPUs per node)`,
        describeValue(value),
      );
  }
}

/** What arrival generators produce resolves and can run somewhere. */
function generatedWorkloads(c: Context): void {
  c.bp.workloads.forEach((gen, g) => {
    const project = projectOf(c, ["workloads", g, "project"], gen.project);
    if (project === undefined) return;
    checkPoolList(c, project, ["workloads", g, "nodePools"], gen.nodePools);
    gen.mix.forEach((kind, k) => {
      const path: YamlPath = ["workloads", g, "mix", k];
      checkPoolList(c, project, [...path, "nodePools"], kind.nodePools);
      checkImage(c, [...path, "image"], kind.image);
      const chosen = kind.nodePools ?? gen.nodePools ?? Object.keys(project.nodePools);
      checkRequests(c, path, usablePools(c, project, chosen), kind);
      checkFits(c, project, chosen, {
        path,
        type: kind.type,
        priorityClass: kind.priorityClass,
        // A zero-probability point of the CDF is never drawn, so it need not fit.
        gpus: kind.gpus
          .map(([gpus, pct], i) => ({
            gpus,
            path: [...path, "gpus", i, 0] as YamlPath,
            drawn: pct !== (i === 0 ? 0 : kind.gpus[i - 1]?.[1]),
          }))
          .filter((point) => point.drawn),
      });
    });
  });
}

/** Individual submissions resolve and can run somewhere. */
function submittedWorkloads(c: Context): void {
  c.bp.submissions.forEach((sub, s) => {
    const project = projectOf(c, ["submissions", s, "project"], sub.project);
    if (project === undefined) return;
    checkPoolList(c, project, ["submissions", s, "nodePools"], sub.nodePools);
    checkImage(c, ["submissions", s, "image"], sub.image);
    const chosen = sub.nodePools ?? Object.keys(project.nodePools);
    checkRequests(c, ["submissions", s], usablePools(c, project, chosen), sub);
    checkFits(c, project, chosen, {
      path: ["submissions", s],
      type: sub.type,
      priorityClass: sub.priorityClass,
      gpus: [{ gpus: sub.gpus, path: ["submissions", s, "gpus"] }],
    });
  });
}

/** Faults name nodes (and GPUs) that the blueprint has. */
function faultTargets({ bp, error }: Context): void {
  const nodes = new Map<string, NodePool>();
  for (const pool of bp.nodePools) for (let i = 0; i < pool.nodes; i++) nodes.set(nodeName(pool, i), pool);
  const examples = bp.nodePools.map((p) => nodeName(p, 0)).join(", ");
  const nodeProblem = (path: YamlPath, node: string) =>
    error(path, `a node of the blueprint (names look like ${examples})`, describeValue(node));
  bp.faults.memoryPressure.forEach((pressure, i) => {
    if (!nodes.has(pressure.node)) nodeProblem(["faults", "memoryPressure", i, "node"], pressure.node);
  });
  const gpuTarget = (kind: "injections" | "powerCaps", i: number, node: string, gpu: number): NodePool | undefined => {
    const pool = nodes.get(node);
    if (pool === undefined) nodeProblem(["faults", kind, i, "node"], node);
    else if (gpu >= pool.gpusPerNode)
      error(["faults", kind, i, "gpu"], `a GPU index below ${pool.gpusPerNode} (GPUs per node in pool "${pool.name}")`, String(gpu));
    else return pool;
    return undefined;
  };
  bp.faults.injections.forEach((injection, i) => {
    gpuTarget("injections", i, injection.node, injection.gpu);
  });
  bp.faults.powerCaps.forEach((cap, i) => {
    const pool = gpuTarget("powerCaps", i, cap.node, cap.gpu);
    if (pool === undefined) return;
    // Above the draw of a held context (else the clock would stop) and below the board's own limit.
    const model = GPU_MODELS[pool.gpuModel];
    const lowest = Math.ceil(model.contextIdlePowerW / POWER_CAP_FRACTION) + 1;
    if (cap.watts < lowest || cap.watts >= model.powerLimitW)
      error(
        ["faults", "powerCaps", i, "watts"],
        `a limit from ${lowest} W to below ${model.powerLimitW} W (the ${pool.gpuModel}'s power limit)`,
        String(cap.watts),
      );
  });
}

function neverFitsExplanation(
  type: string,
  usable: readonly NodePool[],
  quotas: Blueprint["projects"][number]["nodePools"],
  priority: number | undefined,
): string {
  const facts = usable.map((pool) => {
    const quota = quotas[pool.name];
    const limit = quota && quota.limit >= 0 ? `, limit ${quota.limit}` : "";
    return `${pool.name}: ${pool.nodes}×${pool.gpusPerNode} GPUs, deserved ${quota?.deserved ?? 0}${limit}`;
  });
  const rule =
    type === "distributed-training"
      ? "a GPU count that splits evenly into at most one pod per node"
      : "a GPU count that fits on one node (use type distributed-training to span nodes)";
  const quotaRule =
    priority !== undefined && !isPreemptible(priority)
      ? ", within the deserved quota (non-preemptible) and the limit"
      : " and within the limit";
  return `${rule}${quotaRule} in some node pool of the workload (${facts.join("; ")})`;
}
