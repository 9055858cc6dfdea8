/**
 * @module
 * What a resource path names, learned from the upstream's discovery (the group/version's
 * `APIResourceList`): whether the resource exists, whether it is namespaced and which verbs it
 * serves. The Worker asks before any hub is touched, so a typo, a group the cluster does not
 * serve or a watch of a resource that cannot be watched is answered as the API server answers
 * it, and built-ins, custom resources and cluster-scoped resources all work alike.
 */
import { apiVersionOf } from "../k8s/path.ts";
import { failure, methodNotAllowed, serviceUnavailable, type Result } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { DiscoveryUnavailable, type DiscoveryCache, type DiscoveryDocument, type DiscoveryFetch } from "./discovery-cache.ts";

export interface ResourceInfo {
  group: string;
  version: string;
  /** The plural, as in the path. */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: readonly string[];
}

export type ResourceVerb = "get" | "list" | "watch";

/** go-restful's answer for a path no route serves, with why the relay thinks so. */
export const notFoundPath = (detail: string): Status => failure(404, "NotFound", `the server could not find the requested resource (${detail})`, {});

/** Where a group/version's `APIResourceList` lives. */
export const groupVersionPath = (group: string, version: string): string => (group === "" ? `/api/${version}` : `/apis/${group}/${version}`);

interface ListedResource {
  name?: unknown;
  kind?: unknown;
  namespaced?: unknown;
  verbs?: unknown;
}

/** The resources of an `APIResourceList` by plural; subresources (`pods/status`) are not collections and are left out. */
export function indexResourceList(document: unknown, group: string, version: string): Map<string, ResourceInfo> {
  const index = new Map<string, ResourceInfo>();
  const resources = (document as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(resources)) return index;
  for (const r of resources as ListedResource[]) {
    if (typeof r.name !== "string" || r.name.includes("/")) continue;
    index.set(r.name, {
      group,
      version,
      resource: r.name,
      kind: typeof r.kind === "string" ? r.kind : "",
      namespaced: r.namespaced === true,
      verbs: Array.isArray(r.verbs) ? r.verbs.filter((v): v is string => typeof v === "string") : [],
    });
  }
  return index;
}

/** `deployments.apps`, `pods`: how the API server names a resource in messages. */
const qualified = (info: ResourceInfo): string => (info.group ? `${info.resource}.${info.group}` : info.resource);

/**
 * The Status for a verb the resource does not serve, or `undefined`. A watch gets
 * `NewMethodNotSupported` (apiserver `handlers/get.go` `ListResource`); a get or list, whose
 * route the API server never installs, gets go-restful's 405.
 */
export function unsupportedVerb(info: ResourceInfo, verb: ResourceVerb): Status | undefined {
  if (info.verbs.includes(verb)) return undefined;
  if (verb === "watch") {
    const details = info.group ? { group: info.group, kind: info.resource } : { kind: info.resource };
    return failure(405, "MethodNotAllowed", `watch is not supported on resources of kind "${qualified(info)}"`, details);
  }
  return methodNotAllowed(`the server does not allow this method on the requested resource (discovery lists no "${verb}" verb for ${qualified(info)})`);
}

/** Parsed indexes by document, so a cached document is parsed once however often it is asked. */
const indexes = new WeakMap<DiscoveryDocument, Map<string, ResourceInfo>>();

/** Resolve `group/version/resource` of `cluster` through its (cached) discovery: the resource, a 404, or a 503 naming the cause. */
export async function resolveResource(cache: DiscoveryCache, cluster: string, fetch: DiscoveryFetch, path: { group: string; version: string; resource: string }): Promise<Result<ResourceInfo>> {
  const apiVersion = apiVersionOf(path.group, path.version);
  let document: DiscoveryDocument;
  try {
    document = await cache.get(cluster, groupVersionPath(path.group, path.version), "application/json", fetch);
  } catch (e) {
    if (!(e instanceof DiscoveryUnavailable)) throw e;
    return { ok: false, status: serviceUnavailable(`the relay cannot tell what "${path.resource}" is in ${apiVersion}: ${e.message}`, 5) };
  }
  if (document.status === 404) return { ok: false, status: notFoundPath(`the upstream API server does not serve ${apiVersion}`) };
  let index = indexes.get(document);
  if (!index) {
    try {
      index = indexResourceList(JSON.parse(document.body), path.group, path.version);
    } catch (e) {
      return { ok: false, status: serviceUnavailable(`the upstream's discovery for ${apiVersion} is not JSON: ${(e as Error).message}`, 5) };
    }
    indexes.set(document, index);
  }
  const info = index.get(path.resource);
  if (!info) return { ok: false, status: notFoundPath(`${apiVersion} has no resource "${path.resource}"`) };
  return { ok: true, value: info };
}
