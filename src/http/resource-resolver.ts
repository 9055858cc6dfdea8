/**
 * @module
 * What a resource path names, learned from the upstream's discovery (the group/version's
 * `APIResourceList`): whether the resource exists, whether it is namespaced and which verbs it
 * serves. The Worker asks before any hub is touched, so a typo, a group the cluster does not
 * serve or a watch of a resource that cannot be watched is answered as the API server answers
 * it, and built-ins, custom resources and cluster-scoped resources all work alike. A group or
 * version missing from the cluster's own lists (`/api`, `/apis`) is a 404 without asking for it:
 * otherwise every distinct made-up group would cost the upstream a request.
 */
import { apiVersionOf } from "../k8s/path.ts";
import { failure, methodNotAllowed, serviceUnavailable, type Result } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import { DocumentUnavailable, type DocumentCache, type DocumentFetch, type UpstreamDocument } from "./document-cache.ts";

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

/** The groups and group/versions (`v1`, `apps`, `apps/v1`) an `APIVersions` (`/api`) or `APIGroupList` (`/apis`) names. */
export function indexServed(document: unknown): Set<string> {
  const served = new Set<string>();
  const { versions, groups } = (document ?? {}) as { versions?: unknown; groups?: unknown };
  if (Array.isArray(versions)) for (const v of versions) if (typeof v === "string") served.add(v);
  if (Array.isArray(groups)) {
    for (const g of groups as Array<{ name?: unknown; versions?: unknown }>) {
      if (typeof g?.name !== "string") continue;
      served.add(g.name);
      if (Array.isArray(g.versions)) for (const v of g.versions as Array<{ version?: unknown }>) if (typeof v?.version === "string") served.add(`${g.name}/${v.version}`);
    }
  }
  return served;
}

/** Parsed documents, so a cached document is parsed once however often it is asked. */
const indexes = new WeakMap<UpstreamDocument, Map<string, ResourceInfo>>();
const servedIndexes = new WeakMap<UpstreamDocument, Set<string>>();

const decoder = new TextDecoder();
export const textOf = (document: UpstreamDocument): string => decoder.decode(document.body);

/**
 * Whether the cluster's list (`/api` for the core group, `/apis` for the others) names the group,
 * or the group/version: `undefined` when the list cannot be had or read, and the caller asks for
 * the group/version itself.
 */
export async function listsGroupVersion(cache: DocumentCache, cluster: string, fetch: DocumentFetch, group: string, version: string | undefined): Promise<boolean | undefined> {
  let document: UpstreamDocument;
  try {
    document = await cache.get(cluster, group === "" ? "/api" : "/apis", "application/json", fetch);
  } catch (e) {
    if (e instanceof DocumentUnavailable) return undefined;
    throw e;
  }
  if (document.status !== 200) return undefined;
  let served = servedIndexes.get(document);
  if (!served) {
    try {
      served = indexServed(JSON.parse(textOf(document)));
    } catch {
      return undefined;
    }
    servedIndexes.set(document, served);
  }
  // An empty list is not a cluster's (every one serves v1 and some groups): ask the group/version.
  if (served.size === 0) return undefined;
  return served.has(version === undefined ? group : apiVersionOf(group, version));
}

/** Resolve `group/version/resource` of `cluster` through its (cached) discovery: the resource, a 404, or a 503 naming the cause. */
export async function resolveResource(cache: DocumentCache, cluster: string, fetch: DocumentFetch, path: { group: string; version: string; resource: string }): Promise<Result<ResourceInfo>> {
  const apiVersion = apiVersionOf(path.group, path.version);
  const notServed = { ok: false as const, status: notFoundPath(`the upstream API server does not serve ${apiVersion}`) };
  if ((await listsGroupVersion(cache, cluster, fetch, path.group, path.version)) === false) return notServed;
  let document: UpstreamDocument;
  try {
    document = await cache.get(cluster, groupVersionPath(path.group, path.version), "application/json", fetch);
  } catch (e) {
    if (!(e instanceof DocumentUnavailable)) throw e;
    return { ok: false, status: serviceUnavailable(`the relay cannot tell what "${path.resource}" is in ${apiVersion}: ${e.message}`, 5) };
  }
  if (document.status === 404) return notServed;
  let index = indexes.get(document);
  if (!index) {
    try {
      index = indexResourceList(JSON.parse(textOf(document)), path.group, path.version);
    } catch (e) {
      return { ok: false, status: serviceUnavailable(`the upstream's discovery for ${apiVersion} is not JSON: ${(e as Error).message}`, 5) };
    }
    indexes.set(document, index);
  }
  const info = index.get(path.resource);
  if (!info) return { ok: false, status: notFoundPath(`${apiVersion} has no resource "${path.resource}"`) };
  return { ok: true, value: info };
}
