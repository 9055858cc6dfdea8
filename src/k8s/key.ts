/**
 * @module
 * The watch key: what one hub (and one upstream watch) serves. Selectors are canonicalised so
 * that equivalent spellings (`b=2,a=1` and `a=1, b=2`) share one hub.
 */
import { formatFieldSelector, parseFieldSelector, validateFieldSelector } from "./fields.ts";
import { formatLabelSelector, parseLabelSelector, refuseControlCharacters } from "./labels.ts";
import { apiVersionOf, collectionPath } from "./path.ts";

/** An object's key within a collection, as client-go's `MetaNamespaceKeyFunc` makes it: `namespace/name`, or `name` when cluster-scoped (also the order the API server lists in). */
export const metaNamespaceKey = (namespace: string | undefined, name: string): string => (namespace ? `${namespace}/${name}` : name);

export interface WatchKey {
  /** Cluster name; `default` for bare paths. */
  cluster: string;
  group: string;
  version: string;
  resource: string;
  /** `undefined` for all namespaces and for cluster-scoped resources. */
  namespace: string | undefined;
  /** Canonical label selector, `""` for none. */
  labelSelector: string;
  /** Canonical field selector, `""` for none. */
  fieldSelector: string;
}

export const DEFAULT_CLUSTER = "default";

export interface KeyInput {
  cluster: string | undefined;
  group: string;
  version: string;
  resource: string;
  namespace: string | undefined;
  /** Whether the resource is namespaced (decides which field labels exist). */
  namespaced: boolean;
  labelSelector: string | null;
  fieldSelector: string | null;
}

/** Build the canonical key; throws `SelectorError` for a selector the API server (or the relay) would reject. */
export function watchKey(input: KeyInput): WatchKey {
  refuseControlCharacters("label", input.labelSelector ?? "");
  refuseControlCharacters("field", input.fieldSelector ?? "");
  const labels = formatLabelSelector(parseLabelSelector(input.labelSelector ?? ""));
  const fields = formatFieldSelector(validateFieldSelector(parseFieldSelector(input.fieldSelector ?? ""), input.group, input.resource, input.namespaced));
  return {
    cluster: input.cluster ?? DEFAULT_CLUSTER,
    group: input.group,
    version: input.version,
    resource: input.resource,
    namespace: input.namespace,
    labelSelector: labels,
    fieldSelector: fields,
  };
}

/** The hub's name: unambiguous and stable, so one key always reaches one Durable Object. */
export function hubName(key: WatchKey): string {
  return JSON.stringify([key.cluster, key.group, key.version, key.resource, key.namespace ?? "", key.labelSelector, key.fieldSelector]);
}

/** A readable form for logs: `default:/api/v1/namespaces/x/pods?labelSelector=app%3Dweb`. */
export function describeKey(key: WatchKey): string {
  return `${key.cluster}:${upstreamCollectionUrl(key)}`;
}

/** Path and selector query of the key's collection upstream (no cluster prefix). */
export function upstreamCollectionUrl(key: WatchKey, extra?: Record<string, string>): string {
  const query = new URLSearchParams();
  if (key.labelSelector) query.set("labelSelector", key.labelSelector);
  if (key.fieldSelector) query.set("fieldSelector", key.fieldSelector);
  for (const [k, v] of Object.entries(extra ?? {})) query.set(k, v);
  const qs = query.toString();
  return collectionPath(key) + (qs ? `?${qs}` : "");
}

export const keyApiVersion = (key: WatchKey): string => apiVersionOf(key.group, key.version);
