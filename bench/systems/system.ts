/**
 * @module
 * What the bench needs to know about a running system under test: where its subscribers
 * connect on each transport and how they behave there (acknowledge, subprotocol, resume), which
 * processes its cost is measured on, and how far it has got in a collection. Every scenario
 * drives every system through this one interface.
 */
import type { SubscriberSpec } from "../loadgen.ts";
import type { Sim } from "../sim.ts";
import { CATALOG, type SystemName, type Transport } from "./catalog.ts";

export type { SystemName, Transport } from "./catalog.ts";

/** The relay's two WebSocket framings, reported side by side: one event per message, as the API server sends (`relay`), and the batches a client gets by opting in (`relay-batched`). */
export const RELAY_MODES: readonly SystemName[] = ["relay", "relay-batched"];

/** Where and how a subscriber connects on one transport. */
export interface Endpoint {
  /** Its subscribers open watches by message on one relay socket each (`/_relay/socket`). */
  readonly socket?: boolean;
  /** Base of subscriber URLs: `ws://…` or `http://…`. */
  readonly base: string;
  /** Subscribers acknowledge what they received (the relay's WebSocket extension). */
  readonly ack: boolean;
  /** The WebSocket subprotocol its subscribers offer, which changes what the system sends them. */
  readonly protocol?: string;
  /** Its subscribers resume asking for net changes (`compact=true`). */
  readonly compact?: boolean;
}

export interface System {
  readonly name: SystemName;
  /** Processes whose CPU and memory are this system's cost. */
  readonly pids: readonly number[];
  /** One for each transport the catalog says it serves. */
  readonly endpoints: Readonly<Partial<Record<Transport, Endpoint>>>;
  /** Base of list URLs, for systems that serve list snapshots. */
  readonly listBase?: string;
  /** How a dropped subscriber catches up: from its resourceVersion, or by relisting from the API server. */
  readonly resume: "rv" | "relist";
  /** Newest resourceVersion the system holds for a collection. */
  head(path: string, labelSelector?: string): Promise<number>;
  /** JS heap in use after a full collection (memory the system's own code holds), in bytes. */
  heapBytes(): Promise<number>;
}

/** The transports a system serves, WebSocket first. */
export const transportsOf = (system: System | SystemName): readonly Transport[] => CATALOG[typeof system === "string" ? system : system.name].transports;

/** Where a scenario measures a system on one transport only: WebSocket, where it serves it (the relay's framings and the Node baselines compare there). */
export const primaryTransport = (system: System | SystemName): Transport => transportsOf(system)[0] as Transport;

/** A subscriber of `system`, over `transport`, watching the collection at `path`. */
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

/** A client of `system` watching several collections: on a relay socket, one client with all of them; anywhere else, one subscriber per collection (what a client without the socket opens). */
export function clientOf(system: System, sim: Sim, watches: ReadonlyArray<{ path: string; labelSelector?: string }>): SubscriberSpec[] {
  const endpoint = system.endpoints.ws;
  if (!endpoint) throw new Error(`${system.name} has no WebSocket endpoint`);
  if (!endpoint.socket) return watches.map((w) => subscriber(system, "ws", sim, w.path, w.labelSelector));
  return [{ url: `${endpoint.base}/_relay/socket`, ack: endpoint.ack, protocol: endpoint.protocol, resume: system.resume, listUrl: `${sim.url}${watches[0]?.path ?? ""}`, watches: [...watches] }];
}

/** The processes behind some systems, named by role (for the report, and to check none outlives a run). */
export type Processes = Array<{ role: string; pid: number }>;

/** What starting a host gives: the systems it serves, and its processes. */
export interface Launched {
  systems: System[];
  processes: Processes;
}
