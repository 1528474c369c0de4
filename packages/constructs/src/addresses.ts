/**
 * Network identities the emulated cluster needs but the simulation does not model: node
 * internal IPs, per-node pod CIDRs and pod IPs. Deterministic, so every construct agrees on them.
 * Layout (a modelling choice): nodes in 10.0.0.0/16; pods in 10.244.0.0/14 with a /24 per node
 * (Flannel's default network is 10.244.0.0/16, one /24 per node); control-plane pods
 * (kube-state-metrics, the scheduler, Run:ai services) in the last /24 of that range. The /14
 * holds 1,023 nodes' /24s beside the control plane's: a larger cluster's further nodes take theirs
 * from a second range, 10.128.0.0/10, as a cluster grown past its first pod range is given another
 * (GKE's discontiguous multi-Pod CIDR), clear of the nodes' range and of kubeadm's default
 * service range (10.96.0.0/12). Its 16,384 /24s hold every node MAX_NODES allows; without it,
 * hyperscale.yaml's 12,800 nodes ran to pod addresses such as 10.285.119.254.
 */
import { type Blueprint, nodeName } from "@gpusynth/blueprint";
import type { DeepReadonly, DomainEvent, Node, PodPlacement, Pool } from "@gpusynth/sim";
import { unitHash } from "./noise.js";

/** Index of a node across all pools, in declaration order. */
export function nodeOrdinal(pools: readonly DeepReadonly<Pool>[], node: DeepReadonly<Node>): number {
  let ordinal = 0;
  for (const pool of pools) {
    if (pool.name === node.pool.name) return ordinal + node.index;
    ordinal += pool.nodes.length;
  }
  return ordinal + node.index;
}

export function nodeInternalIp(ordinal: number): string {
  return `10.0.${Math.floor(ordinal / 250)}.${(ordinal % 250) + 4}`;
}

export function podCidr(ordinal: number): string {
  return `${podNetwork(ordinal)}.0/24`;
}

/**
 * The first and last host of a node's /24 a workload pod gets: .1 is the bridge's gateway, .255
 * the broadcast, and the top 32 (.223–.254) went to the node's system pods when the cluster
 * was installed (systemPodIpOnNode; a modelling choice of where in the range they sit).
 */
const FIRST_POD_HOST = 2;
const LAST_POD_HOST = 222;
const SYSTEM_POD_HOSTS = 32;

/** The address of the node's `slot`-th system pod that is not on the host network (slot < 32: a one-node cluster holds 20). */
export function systemPodIpOnNode(ordinal: number, slot: number): string {
  if (slot >= SYSTEM_POD_HOSTS) throw new Error(`system pod slot ${slot} beyond the ${SYSTEM_POD_HOSTS} a node keeps`);
  return `${podNetwork(ordinal)}.${254 - slot}`;
}

/**
 * Pod IPs as each node's host-local IPAM hands them out (the CNI IPAM plugin Flannel delegates
 * to: containernetworking/plugins plugins/ipam/host-local, its range the node's pod CIDR with the
 * gateway .1 reserved): the next free address after the last one it allocated, wrapping round, so
 * no two pods holding an address on one node share it, and a released address comes back only
 * after the range has gone round. An address is allocated when a pod starts on a node and
 * released when the pod ends (its sandbox torn down); a finished pod keeps showing the address it
 * had, as its status.podIP does. Driven by the simulation's events, so every reader at any
 * cadence sees the same addresses.
 */
export class PodIpam {
  private readonly ordinals = new Map<string, number>();
  /** Per node ordinal: the hosts in use and the last one allocated. */
  private readonly nodes = new Map<number, { readonly used: Set<number>; last: number }>();
  private readonly ips = new Map<string, { readonly ordinal: number; readonly host: number }>();
  /** Ended pods, oldest first: forgotten once the API has deleted them (time.finishedPodRetention). */
  private readonly ended: Array<{ readonly uid: string; readonly at: number }> = [];
  private readonly retentionMs: number;

  constructor(blueprint: Blueprint) {
    this.retentionMs = blueprint.time.finishedPodRetention;
    let ordinal = 0;
    for (const pool of blueprint.nodePools)
      for (let index = 0; index < pool.nodes; index++) this.ordinals.set(nodeName(pool, index), ordinal++);
  }

  readonly record = (event: DomainEvent): void => {
    switch (event.kind) {
      case "WorkloadStarted":
        for (const pod of event.pods) this.allocate(pod);
        break;
      case "WorkloadPreempted":
      case "WorkloadCompleted":
      case "WorkloadFailed":
      case "WorkloadCancelled":
        for (const pod of event.pods) {
          this.release(pod.uid);
          this.ended.push({ uid: pod.uid, at: event.t });
        }
        break;
      case "RankFailed":
        this.release(event.pod.uid);
        this.ended.push({ uid: event.pod.uid, at: event.t });
        break;
      default:
        break;
    }
    while ((this.ended[0]?.at ?? Number.POSITIVE_INFINITY) < event.t - this.retentionMs) {
      const gone = this.ended.shift() as { uid: string };
      // A pod that started again since keeps its new address.
      if (!this.running(gone.uid)) this.ips.delete(gone.uid);
    }
  };

  /** The pod's address on the node with the given ordinal, once it has started there. */
  ipOf(podUid: string): string | undefined {
    const held = this.ips.get(podUid);
    return held === undefined ? undefined : `${podNetwork(held.ordinal)}.${held.host}`;
  }

  private allocate(pod: PodPlacement): void {
    const ordinal = this.ordinals.get(pod.node);
    if (ordinal === undefined) return;
    this.release(pod.uid);
    let node = this.nodes.get(ordinal);
    if (node === undefined) {
      node = { used: new Set(), last: LAST_POD_HOST };
      this.nodes.set(ordinal, node);
    }
    // A /24 holds 253 pods; a node runs far fewer (its GPUs bound it), so a free host exists.
    let host = node.last;
    do host = host >= LAST_POD_HOST ? FIRST_POD_HOST : host + 1;
    while (node.used.has(host) && host !== node.last);
    node.used.add(host);
    node.last = host;
    this.ips.set(pod.uid, { ordinal, host });
  }

  private running(podUid: string): boolean {
    const held = this.ips.get(podUid);
    return held !== undefined && this.nodes.get(held.ordinal)?.used.has(held.host) === true;
  }

  /** Frees the pod's address for reuse; the pod keeps showing it. */
  private release(podUid: string): void {
    const held = this.ips.get(podUid);
    if (held !== undefined) this.nodes.get(held.ordinal)?.used.delete(held.host);
  }
}

/** Nodes whose pod /24 is in 10.244.0.0/14: all of its 1,024 but the last, the control plane's. */
const FIRST_RANGE_NODES = 1_023;
/** The /24s of the second range, 10.128.0.0/10. */
const SECOND_RANGE_NODES = 16_384;

/** The first three octets of the node's pod /24. */
function podNetwork(ordinal: number): string {
  if (ordinal < FIRST_RANGE_NODES) return `10.${244 + Math.floor(ordinal / 256)}.${ordinal % 256}`;
  const next = ordinal - FIRST_RANGE_NODES;
  if (next >= SECOND_RANGE_NODES)
    throw new Error(`node ordinal ${ordinal} beyond the ${FIRST_RANGE_NODES + SECOND_RANGE_NODES} nodes the pod network holds`);
  return `10.${128 + Math.floor(next / 256)}.${next % 256}`;
}

/** The IP of a control-plane pod, by a stable key such as "kube-state-metrics". */
export function systemPodIp(key: string): string {
  return `10.247.255.${2 + Math.floor(unitHash(key) * 252)}`;
}
