/**
 * @module
 * Kubernetes wire types the relay and the simulator share. Object shapes come from
 * `kubernetes-types`; this file only adds what the watch protocol itself defines.
 */
import type { ObjectMeta, Status } from "kubernetes-types/meta/v1.js";

export type { ObjectMeta, Status };

/** Any Kubernetes object as it travels on the wire. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export const WATCH_EVENT_TYPES: ReadonlySet<string> = new Set<WatchEventType>(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/** The API's verbs on resources (RBAC's names). */
export type KubeVerb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete";

/** One line of a watch stream (`metav1.WatchEvent`). */
export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T;
}

/** `k8s.io/initial-events-end`: marks the end of `sendInitialEvents` on its BOOKMARK. */
export const INITIAL_EVENTS_END = "k8s.io/initial-events-end";

/** A collection as the API server lists it. */
export interface KubeList<T = KubeObject> {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: T[];
}
