/**
 * A fixed numbering of the simulated cluster's node pools, nodes, GPUs and queues, and the
 * identifiers the control plane gives them: node pools are numbered from 1, projects and
 * departments get numeric ids in declaration order, nodes a UUID fixed by cluster and name.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import type { ClusterView, DeepReadonly, Gpu, Node, Pool, Queue } from "@gpusynth/sim";
import { stableUuid } from "../noise.js";

export interface NodeSlot {
  readonly node: DeepReadonly<Node>;
  readonly pool: DeepReadonly<Pool>;
  readonly id: string;
  /** Its GPUs' positions in ClusterIndex.gpus. */
  readonly gpus: readonly number[];
}

export interface PoolSlot {
  readonly pool: DeepReadonly<Pool>;
  /** The API's node-pool id. */
  readonly id: string;
  readonly nodes: readonly number[];
  readonly gpus: readonly number[];
}

export interface OrgUnit {
  readonly kind: "project" | "department";
  readonly id: string;
  readonly name: string;
  /** For a project: its department's id. */
  readonly parentId: string | null;
  /** Positions in the view's queue list, one per node pool the unit has a queue in. */
  readonly queues: readonly number[];
}

export class ClusterIndex {
  readonly gpus: DeepReadonly<Gpu>[] = [];
  readonly gpuNode: number[] = [];
  readonly nodes: NodeSlot[] = [];
  readonly pools: PoolSlot[] = [];
  readonly queues: readonly DeepReadonly<Queue>[];
  readonly projects: OrgUnit[];
  readonly departments: OrgUnit[];
  private readonly nodeIds = new Map<string, number>();
  private readonly nodeNames = new Map<string, number>();
  private everyGpu: number[] | undefined;

  constructor(blueprint: Blueprint, view: ClusterView) {
    view.pools.forEach((pool, p) => {
      const nodes: number[] = [];
      const poolGpus: number[] = [];
      for (const node of pool.nodes) {
        const gpus = node.gpus.map((gpu) => {
          this.gpuNode.push(this.nodes.length);
          poolGpus.push(this.gpus.length);
          return this.gpus.push(gpu) - 1;
        });
        const id = stableUuid(`${blueprint.cluster.clusterId}/node/${node.name}`);
        this.nodeIds.set(id, this.nodes.length);
        this.nodeNames.set(node.name, this.nodes.length);
        nodes.push(this.nodes.length);
        this.nodes.push({ node, pool, id, gpus });
      }
      this.pools.push({ pool, id: String(p + 1), nodes, gpus: poolGpus });
    });
    this.queues = view.queues;
    const queuesOf = (level: "project" | "department", name: string) =>
      view.queues.flatMap((q, i) => (q.level === level && q.name === name ? [i] : []));
    this.departments = blueprint.departments.map((d, i) => ({
      kind: "department",
      id: String(i + 1),
      name: d.name,
      parentId: null,
      queues: queuesOf("department", d.name),
    }));
    const departmentId = new Map(this.departments.map((d) => [d.name, d.id]));
    this.projects = blueprint.projects.map((p, i) => ({
      kind: "project",
      // Projects are numbered after the departments, so no project and department share an id.
      id: String(blueprint.departments.length + i + 1),
      name: p.name,
      parentId: departmentId.get(p.department) ?? null,
      queues: queuesOf("project", p.name),
    }));
  }

  /** Every GPU's position, in order. */
  get allGpus(): readonly number[] {
    this.everyGpu ??= this.gpus.map((_, g) => g);
    return this.everyGpu;
  }

  nodeByName(name: string): NodeSlot | undefined {
    const i = this.nodeNames.get(name);
    return i === undefined ? undefined : this.nodes[i];
  }

  poolIndex(name: string): number {
    return this.pools.findIndex((p) => p.pool.name === name);
  }

  nodeById(id: string): NodeSlot | undefined {
    const i = this.nodeIds.get(id);
    return i === undefined ? undefined : this.nodes[i];
  }

  poolByName(name: string): PoolSlot | undefined {
    return this.pools.find((p) => p.pool.name === name);
  }
}
