/**
 * @module
 * The collections the suite reads: ConfigMaps (the objects it writes: no controller touches
 * them, every cluster serves them), and the one it observes when it may not write (`--resource`,
 * looked up in the server's discovery as kubectl would: `pods`, `leases.coordination.k8s.io`).
 */
import { apiVersionOf, collectionPath } from "../src/k8s/path.ts";
import type { Api } from "./http.ts";

export interface Collection {
  group: string;
  version: string;
  /** The plural, as in the path. */
  resource: string;
  kind: string;
  namespaced: boolean;
  /** Where it is read: one namespace, or (`undefined`) all of them. */
  namespace: string | undefined;
  /** `pods`, `leases.coordination.k8s.io`: for messages. */
  name: string;
}

export const apiVersion = (c: Collection): string => apiVersionOf(c.group, c.version);

/** The collection's path: in its namespace, or across all namespaces. */
export const pathOf = (c: Collection): string => collectionPath({ ...c, namespace: c.namespaced ? c.namespace : undefined });

/** One object's path. */
export const itemPath = (c: Collection, namespace: string | undefined, name: string): string =>
  `${collectionPath({ ...c, namespace: c.namespaced ? namespace : undefined })}/${encodeURIComponent(name)}`;

/** The same collection across all namespaces. */
export const allNamespaces = (c: Collection): Collection => ({ ...c, namespace: undefined });

export function configMaps(namespace: string | undefined): Collection {
  return { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true, namespace, name: "configmaps" };
}

interface ListedResource {
  name?: unknown;
  kind?: unknown;
  namespaced?: unknown;
  verbs?: unknown;
}

/** `--resource` (`plural[.group]`) as the server's discovery describes it; throws a message naming what is wrong. */
export async function discoverCollection(api: Api, name: string, namespace: string | undefined): Promise<Collection> {
  const dot = name.indexOf(".");
  const resource = dot < 0 ? name : name.slice(0, dot);
  const group = dot < 0 ? "" : name.slice(dot + 1);
  let version = "v1";
  if (group !== "") {
    const reply = await api.get(`/apis/${group}`);
    const preferred = (reply.json as { preferredVersion?: { version?: unknown } } | undefined)?.preferredVersion?.version;
    if (reply.status !== 200 || typeof preferred !== "string") throw new Error(`--resource ${name}: the server serves no API group "${group}" (GET /apis/${group} answered ${reply.status})`);
    version = preferred;
  }
  const path = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
  const reply = await api.get(path);
  const resources = (reply.json as { resources?: ListedResource[] } | undefined)?.resources;
  if (reply.status !== 200 || !Array.isArray(resources)) throw new Error(`--resource ${name}: GET ${path} answered ${reply.status}, not an APIResourceList`);
  const found = resources.find((r) => r.name === resource);
  if (!found || typeof found.kind !== "string") throw new Error(`--resource ${name}: ${path} lists no resource "${resource}"`);
  const verbs = Array.isArray(found.verbs) ? found.verbs : [];
  if (!verbs.includes("list") || !verbs.includes("watch")) throw new Error(`--resource ${name}: the server cannot list and watch it (verbs: ${verbs.join(", ")})`);
  const namespaced = found.namespaced === true;
  return { group, version, resource, kind: found.kind, namespaced, namespace: namespaced ? namespace : undefined, name };
}
