/**
 * @module
 * What the Worker asks a list cache, and how the cache says where its answer came from: the
 * `Cache-Status` header of RFC 9211 (`kube-watch-relay; hit`, `…; fwd=miss; stored`), read back
 * by the Worker to count lists served from the cache against lists sent upstream.
 */
import { carrier } from "../forwarded.ts";
import type { WatchKey } from "../k8s/key.ts";
import type { ShardSelector } from "../k8s/shard.ts";

/** A list of the key's collection, or (`name`) one object of it; validated by the Worker. */
export interface ListCacheRequest {
  key: WatchKey;
  name?: string | undefined;
  shardSelector?: ShardSelector | undefined;
  /** The client takes the list gzip-coded (the Worker passes it on as the cache wrote it). */
  gzip?: boolean | undefined;
}

export const listCacheRequests = carrier<ListCacheRequest>("x-relay-list-request");

/** The cache's name in `Cache-Status`. */
const CACHE = "kube-watch-relay";

/**
 * `Cache-Status` for an answer: a hit (held from an earlier request's list), collapsed (the list
 * another request was making), or a miss that listed the upstream, stored unless too large;
 * `ttl`: the seconds it stays shared.
 */
export function cacheStatus(outcome: "hit" | "collapsed" | "loaded", stored: boolean, ttl: number): string {
  if (outcome === "hit") return `${CACHE}; hit; ttl=${ttl}`;
  if (outcome === "collapsed") return `${CACHE}; fwd=miss; collapsed; ttl=${ttl}`;
  return stored ? `${CACHE}; fwd=miss; stored; ttl=${ttl}` : `${CACHE}; fwd=miss; detail=too-large`;
}

/** Whether an answer's `Cache-Status` says it was served from the cache or cost an upstream list (`undefined`: not the cache's). */
export function cacheOutcome(header: string | null): "cache" | "upstream" | undefined {
  if (!header?.startsWith(`${CACHE}; `)) return undefined;
  return header.includes("; hit") || header.includes("; collapsed") ? "cache" : "upstream";
}
