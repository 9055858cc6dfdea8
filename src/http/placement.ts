/**
 * @module
 * Where a request for a key goes: its root hub, or, for a hot key, one of the replica hubs its
 * root named for the region the request came in from (DESIGN.md, "Hot keys"): the emptiest, by
 * what each last reported to the root and what this isolate has sent it since. A
 * root that has replicas answers a client's list or watch with their names instead of serving
 * it; the isolate keeps that answer for a few seconds and sends the key's next requests from
 * that region straight to the replicas. A key without replicas costs nothing more: its root
 * serves the request it is sent.
 */
import { AS_WRITTEN } from "../forwarded.ts";
import { hubName, type WatchKey } from "../k8s/key.ts";
import type { WatchHub } from "../hub/hub.ts";
import { emptiest, REPLICAS_HEADER, type NamedReplica, type ReplicaRole } from "../hub/replicas.ts";
import type { Region } from "./region.ts";

/** How long a root's list of replicas is used before the root is asked again. */
const FRESH_MS = 5000;
/** Lists kept at most (the oldest go first). */
const KEPT = 10_000;
/** The region of a request without Cloudflare's `cf` (locally). */
const LOCAL = "local";

/** A request for a hub: `replicaOf` if it is a replica, the region it came in from, and `here` when the hub must serve it itself. */
export type Making = (replicaOf: ReplicaRole | undefined, region: string, here: boolean) => Request;

/** Where a key's root hubs live, and where its replicas do (the same namespace, deployed). */
export interface Hubs {
  roots: DurableObjectNamespace<WatchHub>;
  replicas: DurableObjectNamespace<WatchHub>;
}

export class Placements {
  readonly #known = new Map<string, { replicas: NamedReplica[]; until: number }>();

  /**
   * Send a request (made for a hub by `as`) to the key's root or to one of its replicas: the
   * response of the hub that serves it. A replica behind the resourceVersion asked for, or that
   * does not hold it, sends it back to the root, which then serves it. `holder`: the hub a list's
   * continue token says holds its snapshot, which serves the next page: the root itself, or the
   * replica of that name if the root names it (a token names no hub the root did not make).
   */
  async send(hubs: Hubs, key: WatchKey, region: Region | undefined, as: Making, { holder, now = Date.now() }: { holder?: string | undefined; now?: number } = {}): Promise<Response> {
    const root = hubName(key);
    const where = region ?? LOCAL;
    if (holder === root) return hubs.roots.getByName(root).fetch(as(undefined, where, true), AS_WRITTEN);
    const id = `${where} ${root}`;
    let known = this.#known.get(id);
    if (known && known.until <= now) {
      this.#known.delete(id);
      known = undefined;
    }
    if (!known) {
      const response = await hubs.roots.getByName(root).fetch(as(undefined, where, false), AS_WRITTEN);
      const named = replicasOf(response);
      if (!named) return response;
      known = { replicas: named, until: now + FRESH_MS };
      this.#known.set(id, known);
      if (this.#known.size > KEPT) this.#known.delete(this.#known.keys().next().value as string);
    }
    const { name } = known.replicas.find((replica) => replica.name === holder) ?? emptiest(known.replicas);
    // Made near the clients of its region, where the platform allows.
    const response = await hubs.replicas.getByName(name, region ? { locationHint: region } : undefined).fetch(as({ name, region: where }, where, false), AS_WRITTEN);
    return replicasOf(response) ? hubs.roots.getByName(root).fetch(as(undefined, where, true), AS_WRITTEN) : response;
  }
}

/** The hubs a response says its request goes to instead, if it does. */
function replicasOf(response: Response): NamedReplica[] | undefined {
  const named = response.headers.get(REPLICAS_HEADER);
  return response.status === 307 && named !== null ? (JSON.parse(named) as NamedReplica[]) : undefined;
}
