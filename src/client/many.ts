/**
 * @module
 * `watchMany()`: several collections, possibly of several clusters, as one iteration over one
 * relay socket. Each collection is its own `watch()` (its own list, resume point, relists and
 * acknowledgements); their updates are interleaved as they come, each named. One watch's
 * failure (a 403, say) is reported as that watch's `failed` update and the others go on.
 */
import { WatchError } from "./errors.ts";
import { RelaySocket, type RelaySocketOptions } from "./relay-socket.ts";
import type { KubeResource, WatchOptions, WatchUpdate } from "./types.ts";
import { collectionUrl } from "./url.ts";

/** A watch that ended for good, with what ended it. */
export interface Failed {
  type: "failed";
  error: WatchError;
}

/** An update of one of the watches, named as in the collections given. */
export type NamedUpdate<T> = { name: string } & (WatchUpdate<T> | Failed);

export interface WatchManyOptions extends Omit<WatchOptions, "transport" | "resourceVersion">, RelaySocketOptions {
  /** The socket to share (default: a new one to the first collection's relay, closed when the iteration ends). */
  socket?: RelaySocket;
}

/**
 * Watch several collections over one relay socket:
 * `for await (const u of watchMany({ pods: "/api/v1/pods", prod: "/clusters/prod/apis/apps/v1/deployments" }))`.
 * Updates are taken from each watch only as the loop asks for them, so each keeps its own flow control.
 * @throws TypeError at once if a URL is not a collection URL.
 */
export async function* watchMany<T extends KubeResource = KubeResource>(
  collections: Readonly<Record<string, string | URL>>,
  options: WatchManyOptions = {},
): AsyncGenerator<NamedUpdate<T>, void, undefined> {
  const urls = Object.entries(collections).map(([name, url]) => [name, collectionUrl(url)] as const);
  const first = urls[0];
  if (!first) return;
  const { socket: shared, pageSize, transport, ...watchOptions } = options;
  const socket =
    shared ??
    new RelaySocket(first[1], {
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(pageSize ? { pageSize } : {}),
      ...(transport ? { transport } : {}),
      ...(options.compressed === undefined ? {} : { compressed: options.compressed }),
    });
  // Ending the iteration stops every watch, also one waiting for its next event.
  const stop = new AbortController();
  const signal = watchOptions.signal ? AbortSignal.any([watchOptions.signal, stop.signal]) : stop.signal;
  const running = new Map(urls.map(([name, url]) => [name, socket.watch<T>(url, { ...watchOptions, signal })]));
  type Next = { name: string; result: IteratorResult<WatchUpdate<T>, void> } | { name: string; error: unknown };
  const pending = new Map<string, Promise<Next>>();
  const pull = (name: string) => {
    const updates = running.get(name)!;
    pending.set(
      name,
      updates.next().then(
        (result) => ({ name, result }),
        (error: unknown) => ({ name, error }),
      ),
    );
  };
  for (const name of running.keys()) pull(name);
  try {
    while (pending.size > 0) {
      const next = await Promise.race(pending.values());
      pending.delete(next.name);
      if ("error" in next) {
        running.delete(next.name);
        const error = next.error instanceof WatchError ? next.error : new WatchError(String(next.error), { retryable: false, cause: next.error });
        yield { name: next.name, type: "failed", error };
        continue;
      }
      if (next.result.done) {
        running.delete(next.name);
        continue;
      }
      yield { name: next.name, ...next.result.value };
      pull(next.name);
    }
  } finally {
    stop.abort();
    await Promise.all([...running.values()].map((updates) => updates.return()));
    if (!shared) socket.close();
  }
}
