/**
 * @module
 * What a hub tells the metrics registry: its counts since its last report, and a snapshot of
 * itself for the gauges and the hub index. Plain JSON, as it crosses Durable Objects.
 */
import type { Transport } from "./catalog.ts";
import type { MetricValues } from "./metric-set.ts";

export interface HubSnapshot {
  /** The hub's name: its canonical watch key. */
  hub: string;
  /** The key as people read it: `cluster:/api/v1/pods?labelSelector=...`. */
  key: string;
  cluster: string;
  /** The reflector's state: watching, listing, backoff or stopped. */
  upstream: string;
  /** Whether the hub keeps an upstream watch (or is getting one). */
  watching: boolean;
  subscribers: Record<Transport, number>;
  /** Of its subscribers, the live views open on it (DESIGN.md, "Live views"). */
  views?: number | undefined;
  window: { start: number; head: number; events: number; bytes: number };
  objects: number;
  /** Its SQLite database's size: its collection, window and tombstones (what the platform bills as storage). */
  storageBytes: number;
  /** The window's lines it holds in memory (its share of the isolate's `LINE_MEMORY_BYTES`). */
  memoryBytes: number;
  /** A replica hub's root (DESIGN.md, "Hot keys"). */
  root?: string | undefined;
  /** A root's replicas, as they last reported: their subscribers, and how far behind the root each is. */
  replicas?: Array<{ hub: string; region: string; subscribers: number; lagSeconds: number }> | undefined;
  /** When the hub last committed an event (epoch ms). */
  lastEventAt?: number | undefined;
  /** The last upstream failure, if any since the hub opened. */
  lastError?: { status: number; message: string; at: number } | undefined;
}

export interface HubReport extends HubSnapshot {
  /** Counts since the previous report that reached the registry. */
  delta: MetricValues;
  /** The hub has stopped its upstream watch: it leaves the index (its counts stay in the totals). */
  stopped: boolean;
}

/** One line of `/_relay/hubs`. */
export interface HubIndexEntry extends HubSnapshot {
  lastEventAgeSeconds?: number | undefined;
  reportAgeSeconds: number;
}

/** What a log hub (`src/logs`) tells the registry: its followers against its one upstream stream. */
export interface LogHubSnapshot {
  /** The log hub's name. */
  hub: string;
  /** As people read it: `default:/api/v1/namespaces/x/pods/p/log?container=c`. */
  key: string;
  cluster: string;
  followers: Record<Transport, number>;
  /** Whether its upstream stream is open. */
  streaming: boolean;
  /** Bytes of lines its buffer holds. */
  bufferBytes: number;
}

export interface LogHubReport extends LogHubSnapshot {
  delta: MetricValues;
  /** Its stream ended or stopped, nobody follows: it leaves the gauges. */
  stopped: boolean;
}
