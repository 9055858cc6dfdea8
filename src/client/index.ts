/**
 * @module
 * kube-watch-relay's client, for browsers and Node 22 (both have `fetch` and `WebSocket`):
 * `watch()` yields a collection's changes and survives disconnects by resuming from its last
 * resourceVersion (relisting after a 410); `informer()` keeps a live map of the collection;
 * `view()` keeps a window of it (a page in an order, under a filter, with the count) live;
 * `relaySocket()` carries every watch of a client instance on one WebSocket, and `watchMany()`
 * watches several collections over one.
 *
 * ```ts
 * import { informer } from "@kube-watch-relay/client";
 * import type { Pod } from "kubernetes-types/core/v1";
 *
 * const pods = informer<Pod>("https://relay.example/api/v1/pods", {
 *   onUpdate: (pod) => console.log(pod.metadata?.name, pod.status?.phase),
 * });
 * await pods.synced;
 * ```
 */
export { watch } from "./watch.ts";
export { informer, Informer, type InformerOptions } from "./informer.ts";
export { view, View, type ViewCell, type ViewColumn, type ViewOptions, type ViewRow, type ViewStatus, type ViewWindow } from "./view.ts";
export { clusterOf, objectKey } from "./keys.ts";
export { WatchError, type WatchErrorDetails } from "./errors.ts";
export { relaySocket, RelaySocket, type LogEnd, type RelaySocketOptions } from "./relay-socket.ts";
export { watchMany, type Failed, type NamedUpdate, type WatchManyOptions } from "./many.ts";
export { statsUrl } from "./url.ts";
export type {
  Bookmark,
  Closed,
  Connected,
  KubeResource,
  Listed,
  ObjectChange,
  Relisted,
  Resumed,
  Retrying,
  Transport,
  WatchOptions,
  WatchSocket,
  WatchStatus,
  WatchUpdate,
} from "./types.ts";
// The protocol's types that the client's own types name, so that code using it can name them too.
export type { BackoffOptions } from "../k8s/backoff.ts";
export type { LogParameters } from "../k8s/mux.ts";
export type { KubeList, KubeObject, ObjectMeta, Status } from "../k8s/types.ts";
