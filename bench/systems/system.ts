/**
 * @module
 * What the bench needs to know about a system under test: where its subscribers connect, how
 * they behave (acknowledge, resume), which processes its cost is measured on, and how far it
 * has got in a collection. Every scenario drives every system through this one interface.
 */
import type { SubscriberSpec } from "../loadgen.ts";
import type { Sim } from "../sim.ts";

export type SystemName = "relay" | "relay-batched" | "relay-proxied" | "workerd-floor" | "direct" | "node-relay" | "raw-ws";

/**
 * The relay's two framings, reported side by side: one event per WebSocket message, as the API
 * server sends (`relay`), and the batches a client gets by opting in (`relay-batched`).
 */
export const RELAY_MODES: readonly SystemName[] = ["relay", "relay-batched"];

export interface System {
  readonly name: SystemName;
  /** Processes whose CPU and memory are this system's cost. */
  readonly pids: readonly number[];
  /** Base of subscriber URLs (`ws://…` or `http://…`). */
  readonly watchBase: string;
  /** Base of list URLs, for systems that serve list snapshots. */
  readonly listBase?: string;
  /** Relay subscribers acknowledge what they received. */
  readonly ack: boolean;
  /** The WebSocket subprotocol its subscribers offer, which changes what the system sends them. */
  readonly protocol?: string;
  /** How a dropped subscriber catches up: from its resourceVersion, or by relisting from the API server. */
  readonly resume: "rv" | "relist";
  /** Newest resourceVersion the system holds for a collection. */
  head(path: string, labelSelector?: string): Promise<number>;
  /** JS heap in use after a full collection (memory the system's own code holds), in bytes. */
  heapBytes(): Promise<number>;
}

/** A subscriber of `system` watching the collection at `path`. */
export function subscriber(system: System, sim: Sim, path: string, labelSelector?: string): SubscriberSpec {
  const selector = labelSelector ? `&labelSelector=${encodeURIComponent(labelSelector)}` : "";
  return { url: `${system.watchBase}${path}?watch=1${selector}`, ack: system.ack, protocol: system.protocol, resume: system.resume, listUrl: `${sim.url}${path}${selector.replace("&", "?")}` };
}
