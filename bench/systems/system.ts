/**
 * @module
 * A running system under test, as every scenario drives it: where and how its subscribers
 * connect, which processes its cost is measured on, how far it has got in a collection.
 */
import type { SubscriberSpec } from "../loadgen.ts";
import type { Sim } from "../sim.ts";
import { CATALOG, type SystemName, type Transport } from "./catalog.ts";

export type { SystemName, Transport } from "./catalog.ts";

/** The relay's two WebSocket framings, side by side: one event a message (default), and batches (opt-in). */
export const RELAY_MODES: readonly SystemName[] = ["relay", "relay-batched"];

export interface Endpoint {
  /** Its subscribers open watches by message on one relay socket each. */
  readonly socket?: boolean;
  readonly base: string;
  readonly ack: boolean;
  readonly protocol?: string;
  /** Its subscribers resume asking for net changes (`compact=true`). */
  readonly compact?: boolean;
}

export interface System {
  readonly name: SystemName;
  readonly pids: readonly number[];
  readonly endpoints: Readonly<Partial<Record<Transport, Endpoint>>>;
  /** For systems that serve lists. */
  readonly listBase?: string;
  readonly resume: "rv" | "relist";
  /** Newest resourceVersion the system holds for a collection. */
  head(path: string, labelSelector?: string): Promise<number>;
  /** JS heap in use after a full collection, in bytes. */
  heapBytes(): Promise<number>;
}

/** WebSocket first. */
export const transportsOf = (system: System | SystemName): readonly Transport[] => CATALOG[typeof system === "string" ? system : system.name].transports;

/** Where a scenario measures a system on one transport only: WebSocket, where it serves it. */
export const primaryTransport = (system: System | SystemName): Transport => transportsOf(system)[0] as Transport;

export function subscriber(system: System, transport: Transport, sim: Sim, path: string, labelSelector?: string): SubscriberSpec {
  const endpoint = system.endpoints[transport];
  if (!endpoint) throw new Error(`${system.name} has no ${transport} endpoint`);
  const selector = labelSelector ? `&labelSelector=${encodeURIComponent(labelSelector)}` : "";
  return {
    url: `${endpoint.base}${path}?watch=1${selector}`,
    ack: endpoint.ack,
    protocol: endpoint.protocol,
    compact: endpoint.compact,
    resume: system.resume,
    listUrl: `${sim.url}${path}${selector.replace("&", "?")}`,
  };
}

/** A client watching several collections: on a relay socket, one; anywhere else, a subscriber each. */
export function clientOf(system: System, sim: Sim, watches: ReadonlyArray<{ path: string; labelSelector?: string }>): SubscriberSpec[] {
  const endpoint = system.endpoints.ws;
  if (!endpoint) throw new Error(`${system.name} has no WebSocket endpoint`);
  if (!endpoint.socket) return watches.map((w) => subscriber(system, "ws", sim, w.path, w.labelSelector));
  return [{ url: `${endpoint.base}/_relay/socket`, ack: endpoint.ack, protocol: endpoint.protocol, resume: system.resume, listUrl: `${sim.url}${watches[0]?.path ?? ""}`, watches: [...watches] }];
}

/** Processes named by role (for the report, and to check none outlives a run). */
export type Processes = Array<{ role: string; pid: number }>;

export interface Launched {
  systems: System[];
  processes: Processes;
}
