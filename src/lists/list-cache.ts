/**
 * @module
 * The ListCache Durable Object: one per key of a resource without watch (discovery lists `list`
 * but not `watch`, as metrics.k8s.io's `nodes` and `pods`), which no hub can serve since a hub
 * holds a watch. It lists the upstream at most once per `LIST_CACHE_SECONDS`, however many
 * clients ask: the first request in an interval lists it, the requests that arrive meanwhile
 * wait for that list, and the rest of the interval is answered from it (`shared-load.ts`),
 * gets included (the named object found in the list). Each answer says where it came from
 * (`Age`, `Cache-Status`). It keeps nothing in storage: the list is in memory for the interval,
 * and one larger than `MAX_HELD_BYTES` is not held at all (each request then streams its own).
 */
import { DurableObject } from "cloudflare:workers";
import { ConfigError, listCacheSeconds } from "../config.ts";
import { hubName, upstreamCollectionUrl } from "../k8s/key.ts";
import { LIST_GZIP } from "../hub/shared-gzip.ts";
import { badRequest, notFound, serviceUnavailable, statusResponse } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { unreachable, upstreamFor, upstreamRefusal, type Upstream } from "../upstream.ts";
import type { Vars } from "../vars.ts";
import { findItem, trimmedList } from "./list-body.ts";
import { cacheStatus, listCacheRequests, type ListCacheRequest } from "./request.ts";
import { SharedLoad, type Shared } from "./shared-load.ts";

/** The most of a list held for the interval (an isolate has 128 MB; metrics of 40,000 pods fit). */
export const MAX_HELD_BYTES = 16 * 1024 * 1024;

/** An upstream answer: held (an error Status, or a list within the bound), or being streamed to the request that listed it. */
type Answer = { kind: "held"; status: number; body: Uint8Array } | { kind: "streaming"; body: ReadableStream<Uint8Array> };

export class ListCache extends DurableObject<Vars> {
  #lists: SharedLoad<Answer> | undefined;

  override async fetch(request: Request): Promise<Response> {
    const asked = listCacheRequests.read(request);
    if (!asked) return statusResponse(badRequest("a list cache is reached through the relay's Kubernetes API paths"));
    let upstream: Upstream | undefined;
    let ttlMs: number;
    try {
      upstream = upstreamFor(this.env, asked.key.cluster);
      ttlMs = listCacheSeconds(this.env) * 1000;
    } catch (e) {
      if (e instanceof ConfigError) return statusResponse(serviceUnavailable(`the relay is misconfigured: ${e.message}`));
      throw e;
    }
    if (!upstream) return statusResponse(serviceUnavailable(`cluster "${asked.key.cluster}" is not configured`));
    const from = upstream;
    const load = () => listUpstream(from, asked);
    const lists = (this.#lists ??= new SharedLoad<Answer>(
      ttlMs,
      () => Date.now(),
      (answer) => answer.kind === "held",
    ));
    const shared = (await lists.get(load)) ?? { value: await load(), at: Date.now(), outcome: "loaded" as const };
    return answer(asked, shared, lists);
  }
}

/** The answer to `asked` from a shared list, with where it came from. */
async function answer(asked: ListCacheRequest, shared: Shared<Answer>, lists: SharedLoad<Answer>): Promise<Response> {
  const { value } = shared;
  const headers = new Headers({
    "content-type": "application/json",
    "cache-control": "no-cache, private",
    age: String(Math.max(0, Math.floor((Date.now() - shared.at) / 1000))),
    "cache-status": cacheStatus(shared.outcome, value.kind === "held", lists.remainingSeconds(shared)),
  });
  if (value.kind === "held" && value.status !== 200) return new Response(value.body, { status: value.status, headers });
  const body = () => (value.kind === "held" ? new Response(value.body).body : value.body) as ReadableStream<Uint8Array>;
  const { key, name, shardSelector } = asked;
  if (name !== undefined) {
    const found = await findItem(body(), name);
    if (!found) return statusResponse(notFound(key.resource, name, key.group), headers);
    return new Response(`${JSON.stringify(found)}\n`, { headers });
  }
  if (!shardSelector && asked.gzip && value.kind === "held") {
    // Compressed once per list held, for every request of its interval that takes gzip.
    const compressed = LIST_GZIP.open(`${hubName(key)}\u0000${shared.at}`, body);
    headers.set("content-encoding", "gzip");
    headers.set("vary", "accept-encoding");
    return new Response(compressed.body, { headers, encodeBody: "manual" });
  }
  if (!shardSelector) return new Response(body(), { headers });
  return new Response(
    body()
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(trimmedList({ shard: shardSelector })),
    { headers },
  );
}

/** The key's list from the upstream: held whole when it fits, an error as its Status, or streamed on. */
async function listUpstream(upstream: Upstream, asked: ListCacheRequest): Promise<Answer> {
  let response: Response;
  try {
    response = await upstream.fetch(upstreamCollectionUrl(asked.key));
  } catch (e) {
    return held(unreachable(e));
  }
  if (response.status !== 200 || !response.body) return held(await upstreamStatus(response));
  // Read up to the bound; a list that does not fit goes on streaming from where the reading stopped.
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { kind: "held", status: 200, body: concat(chunks, size) };
    chunks.push(value);
    size += value.length;
    if (size > MAX_HELD_BYTES) break;
  }
  const rest = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      chunks.length = 0;
    },
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { kind: "streaming", body: rest };
}

const encoder = new TextEncoder();
const held = (status: Status): Answer => ({ kind: "held", status: status.code ?? 500, body: encoder.encode(`${JSON.stringify(status)}\n`) });

/**
 * What a failed upstream list means to the client: the upstream's own Status where it is about
 * the request, what to fix where it is the relay's credentials or rights that are refused, and
 * a failure of the upstream's own as one to retry.
 */
async function upstreamStatus(response: Response): Promise<Status> {
  const status = await upstreamRefusal(response, { what: "this collection", needs: "list there" });
  return response.status >= 500 ? serviceUnavailable(`the upstream API server failed to list this collection: ${status.message}`, 5) : status;
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
