/**
 * Rules that relate one part of a blueprint to another. The schema has already checked each
 * part on its own; here we check that names resolve, quotas nest (project ≤ department, limit
 * ≥ deserved), and that every workload a generator can produce can run somewhere.
 */
import { BUILT_IN_PRIORITY_CLASSES, isPreemptible } from "./priority-classes.js";
import { type BlueprintProblem, describeValue, type YamlPath } from "./problems.js";
import { type Blueprint, MAX_GPUS, MAX_NODES, type NodePool, type Project, type WorkloadType } from "./schema.js";
import { nodeName, podShape } from "./shape.js";

export function crossReferenceProblems(bp: Blueprint): BlueprintProblem[] {
  const problems: BlueprintProblem[] = [];
  const error = (path: YamlPath, expected: string, found: string) => problems.push({ severity: "error", path, expected, found });
  const warning = (path: YamlPath, expected: string, found: string) => problems.push({ severity: "warning", path, expected, found });

  const unique = <T extends { name: string }>(items: readonly T[], section: string) => {
    const seen = new Map<string, number>();
    items.forEach((item, index) => {
      const first = seen.get(item.name);
      if (first !== undefined)
        error([section, index, "name"], `a name not used before in ${section}`, `"${item.name}", already at ${section}[${first}]`);
      else seen.set(item.name, index);
    });
  };
  // Totals the schema cannot see pool by pool (bounds and their basis: MAX_NODES in schema.ts).
  const totalNodes = bp.nodePools.reduce((sum, pool) => sum + pool.nodes, 0);
  const totalGpus = bp.nodePools.reduce((sum, pool) => sum + pool.nodes * pool.gpusPerNode, 0);
  const poolCount = `${bp.nodePools.length} node pool${bp.nodePools.length === 1 ? "" : "s"}`;
  const beyond = "one process simulates the whole cluster; split a larger cluster into several blueprints and run each on its own";
  if (totalNodes > MAX_NODES)
    error(["nodePools"], `at most ${MAX_NODES} nodes in one blueprint (${beyond})`, `${totalNodes} nodes in ${poolCount}`);
  if (totalGpus > MAX_GPUS)
    error(["nodePools"], `at most ${MAX_GPUS} GPUs in one blueprint (${beyond})`, `${totalGpus} GPUs in ${poolCount}`);

  unique(bp.nodePools, "nodePools");
  unique(bp.departments, "departments");
  unique(bp.projects, "projects");
  unique(bp.workloads, "workloads");
  unique(bp.submissions, "submissions");
  unique(bp.images, "images");
  unique(bp.priorityClasses, "priorityClasses");

  const pools = new Map(bp.nodePools.map((pool) => [pool.name, pool]));
  const poolNames = [...pools.keys()].map((n) => `"${n}"`).join(", ");
  const departments = new Map(bp.departments.map((d) => [d.name, d]));
  const projects = new Map(bp.projects.map((p) => [p.name, p]));
  const builtIn = new Set(BUILT_IN_PRIORITY_CLASSES.map((c) => c.name));
  const priorities = new Map(BUILT_IN_PRIORITY_CLASSES.map((c) => [c.name, c.value]));
  bp.priorityClasses.forEach((c, index) => {
    if (builtIn.has(c.name)) error(["priorityClasses", index, "name"], "a name that is not a built-in priority class", `"${c.name}"`);
    priorities.set(c.name, c.value);
  });

  const unknownPool = (path: YamlPath, pool: string) => {
    if (!pools.has(pool)) error(path, `a node pool declared in nodePools (${poolNames})`, `"${pool}"`);
  };

  bp.departments.forEach((dept, d) => {
    for (const [pool, quota] of Object.entries(dept.nodePools)) {
      unknownPool(["departments", d, "nodePools", pool], pool);
      if (quota.limit >= 0 && quota.limit < quota.deserved) {
        error(
          ["departments", d, "nodePools", pool, "limit"],
          `a limit of at least the deserved quota (${quota.deserved}) or -1`,
          String(quota.limit),
        );
      }
    }
  });

  bp.projects.forEach((project, p) => {
    if (!departments.has(project.department)) {
      error(
        ["projects", p, "department"],
        `a department declared in departments (${bp.departments.map((d) => `"${d.name}"`).join(", ")})`,
        `"${project.department}"`,
      );
    }
    if (Object.keys(project.nodePools).length === 0) {
      error(["projects", p, "nodePools"], "quota in at least one node pool", "an empty mapping");
    }
    for (const [pool, quota] of Object.entries(project.nodePools)) {
      unknownPool(["projects", p, "nodePools", pool], pool);
      if (quota.limit >= 0 && quota.limit < quota.deserved) {
        error(
          ["projects", p, "nodePools", pool, "limit"],
          `a limit of at least the deserved quota (${quota.deserved}) or -1`,
          String(quota.limit),
        );
      }
    }
  });

  // Run:ai: a department's quota should cover the sum of its projects' quotas, per node pool.
  bp.departments.forEach((dept, d) => {
    for (const pool of pools.keys()) {
      const members = bp.projects.filter((p) => p.department === dept.name && p.nodePools[pool] !== undefined);
      const sum = members.reduce((total, p) => total + (p.nodePools[pool]?.deserved ?? 0), 0);
      if (sum === 0) continue;
      const deptQuota = dept.nodePools[pool];
      const detail = members.map((p) => `${p.name} ${p.nodePools[pool]?.deserved}`).join(", ");
      if (deptQuota === undefined) {
        error(
          ["departments", d, "nodePools"],
          `a quota for node pool "${pool}" of at least ${sum} GPUs (its projects' deserved: ${detail})`,
          "no quota for that pool",
        );
      } else if (deptQuota.deserved < sum) {
        error(
          ["departments", d, "nodePools", pool, "deserved"],
          `at least the sum of its projects' deserved quotas, ${sum} (${detail})`,
          String(deptQuota.deserved),
        );
      }
    }
  });

  // Quotas may over-subscribe a pool (Run:ai allows it), but then "deserved" is not guaranteed.
  for (const [poolName, pool] of pools) {
    const capacity = pool.nodes * pool.gpusPerNode;
    const deserved = bp.departments.reduce((total, d) => total + (d.nodePools[poolName]?.deserved ?? 0), 0);
    if (deserved > capacity) {
      const index = bp.nodePools.indexOf(pool);
      warning(
        ["nodePools", index],
        `departments' deserved quotas within the pool's ${capacity} GPUs`,
        `${deserved} GPUs deserved in total`,
      );
    }
  }

  /** A workload's declared node pools must exist and hold a quota of its project. */
  const checkPoolList = (project: Project, path: YamlPath, declared: readonly string[] | undefined) => {
    (declared ?? []).forEach((pool, i) => {
      unknownPool([...path, i], pool);
      if (pools.has(pool) && project.nodePools[pool] === undefined) {
        error(
          [...path, i],
          `a node pool in which project "${project.name}" has a quota (${Object.keys(project.nodePools).join(", ") || "none"})`,
          `"${pool}"`,
        );
      }
    });
  };

  /** Every GPU count a workload can ask for must fit some pool it may use, within quota rules. */
  const images = new Set(bp.images.map((i) => i.name));
  const checkImage = (path: YamlPath, image: string | undefined) => {
    if (image !== undefined && !images.has(image)) {
      error(path, `an image declared in images (${[...images].map((i) => `"${i}"`).join(", ") || "none declared"})`, `"${image}"`);
    }
  };

  const checkFits = (
    project: Project,
    chosenPools: readonly string[],
    kind: { path: YamlPath; type: WorkloadType; priorityClass: string; gpus: ReadonlyArray<{ gpus: number; path: YamlPath }> },
  ) => {
    const priority = priorities.get(kind.priorityClass);
    if (priority === undefined) {
      error([...kind.path, "priorityClass"], `a priority class (${[...priorities.keys()].join(", ")})`, `"${kind.priorityClass}"`);
    }
    const usable = chosenPools.filter((n) => pools.has(n) && project.nodePools[n] !== undefined).map((n) => pools.get(n) as NodePool);
    if (usable.length === 0) return;
    for (const { gpus, path } of kind.gpus) {
      const fits = usable.some((pool) => {
        const quota = project.nodePools[pool.name];
        if (quota === undefined || podShape(kind.type, gpus, pool) === undefined) return false;
        if (quota.limit >= 0 && gpus > quota.limit) return false;
        return priority === undefined || isPreemptible(priority) || gpus <= quota.deserved;
      });
      if (!fits) error(path, neverFitsExplanation(kind.type, usable, project.nodePools, priority), describeValue(gpus));
    }
  };

  const projectOf = (path: YamlPath, name: string) => {
    const project = projects.get(name);
    if (project === undefined)
      error(path, `a project declared in projects (${bp.projects.map((p) => `"${p.name}"`).join(", ")})`, `"${name}"`);
    return project;
  };

  bp.workloads.forEach((gen, g) => {
    const project = projectOf(["workloads", g, "project"], gen.project);
    if (project === undefined) return;
    checkPoolList(project, ["workloads", g, "nodePools"], gen.nodePools);
    gen.mix.forEach((kind, k) => {
      const path: YamlPath = ["workloads", g, "mix", k];
      checkPoolList(project, [...path, "nodePools"], kind.nodePools);
      checkImage([...path, "image"], kind.image);
      checkFits(project, kind.nodePools ?? gen.nodePools ?? Object.keys(project.nodePools), {
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
  bp.submissions.forEach((sub, s) => {
    const project = projectOf(["submissions", s, "project"], sub.project);
    if (project === undefined) return;
    checkPoolList(project, ["submissions", s, "nodePools"], sub.nodePools);
    checkImage(["submissions", s, "image"], sub.image);
    checkFits(project, sub.nodePools ?? Object.keys(project.nodePools), {
      path: ["submissions", s],
      type: sub.type,
      priorityClass: sub.priorityClass,
      gpus: [{ gpus: sub.gpus, path: ["submissions", s, "gpus"] }],
    });
  });

  const nodes = new Map<string, NodePool>();
  for (const pool of bp.nodePools) for (let i = 0; i < pool.nodes; i++) nodes.set(nodeName(pool, i), pool);
  const examples = bp.nodePools.map((p) => nodeName(p, 0)).join(", ");
  const nodeProblem = (path: YamlPath, node: string) =>
    error(path, `a node of the blueprint (names look like ${examples})`, describeValue(node));
  bp.faults.memoryPressure.forEach((pressure, i) => {
    if (!nodes.has(pressure.node)) nodeProblem(["faults", "memoryPressure", i, "node"], pressure.node);
  });
  bp.faults.injections.forEach((injection, i) => {
    const pool = nodes.get(injection.node);
    if (pool === undefined) {
      nodeProblem(["faults", "injections", i, "node"], injection.node);
    } else if (injection.gpu >= pool.gpusPerNode) {
      error(
        ["faults", "injections", i, "gpu"],
        `a GPU index below ${pool.gpusPerNode} (GPUs per node in pool "${pool.name}")`,
        String(injection.gpu),
      );
    }
  });
  return problems;
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
