/**
 * @module
 * Turn a resource request into what a hub is asked: the canonical watch key and the parsed
 * list, get or watch options. Everything the API server would reject is rejected here, as the
 * `Status` it would send; what the resource is (scope, verbs) comes from discovery.
 */
import { SelectorError } from "../k8s/labels.ts";
import { watchKey, type WatchKey } from "../k8s/key.ts";
import { isWatch, parseGetOptions, parseListOptions, parseWatchOptions, queryBool } from "../k8s/options.ts";
import type { ResourcePath } from "../k8s/path.ts";
import { badRequest, type Result } from "../k8s/status.ts";
import { columnsFor } from "../k8s/table.ts";
import { parseViewSpec } from "../k8s/view.ts";
import type { HubRequest } from "../hub/request.ts";
import { notFoundPath, unsupportedVerb, type ResourceInfo } from "./resource-resolver.ts";
import { websocketProtocol } from "./websocket.ts";

/** The key of the collection a path and its selectors name (what one hub serves). */
export function resolveKey(path: ResourcePath, resource: ResourceInfo, query: URLSearchParams, nameSelector = false): Result<WatchKey> {
  if (path.subresource !== undefined) return { ok: false, status: notFoundPath(`subresource "${path.subresource}" is not relayed`) };
  if (!resource.namespaced && path.namespace !== undefined) return { ok: false, status: notFoundPath(`${path.resource} is not namespaced`) };
  // The API server has no route for `/api/v1/pods/{name}`: a namespaced object is named inside its namespace.
  if (resource.namespaced && path.namespace === undefined && path.name !== undefined) {
    return { ok: false, status: notFoundPath(`${path.resource} are namespaced: use /namespaces/{namespace}/${path.resource}/${path.name}`) };
  }
  let fieldSelector = query.get("fieldSelector");
  if (nameSelector && path.name !== undefined) fieldSelector = [fieldSelector, `metadata.name=${path.name}`].filter(Boolean).join(",");
  try {
    return {
      ok: true,
      value: watchKey({
        cluster: path.cluster,
        group: path.group,
        version: path.version,
        resource: path.resource,
        namespace: path.namespace,
        namespaced: resource.namespaced,
        labelSelector: query.get("labelSelector"),
        fieldSelector,
      }),
    };
  } catch (e) {
    if (e instanceof SelectorError) return { ok: false, status: badRequest(e.message) };
    throw e;
  }
}

export function resolveRequest(path: ResourcePath, resource: ResourceInfo, query: URLSearchParams, request: Request): Result<HubRequest> {
  if (queryBool(query, "view") === true) return resolveView(path, resource, query, request);
  // A watch of one object (legacy `/watch/.../{name}`, or `?watch` on an item) is a watch of its collection by name.
  const watch = isWatch(query) || path.legacyWatch;
  const verb = watch ? "watch" : path.name !== undefined ? "get" : "list";
  const unsupported = unsupportedVerb(resource, verb);
  if (unsupported) return { ok: false, status: unsupported };
  if (verb === "get" && path.name !== undefined) {
    // A single-object GET names its collection without selectors, whatever it carries (the API server's GetOptions have none).
    const key = resolveKey(path, resource, new URLSearchParams());
    if (!key.ok) return key;
    const options = parseGetOptions(query);
    return options.ok ? { ok: true, value: { verb: "get", key: key.value, namespace: path.namespace, name: path.name, options: options.value } } : options;
  }
  const key = resolveKey(path, resource, query, watch);
  if (!key.ok) return key;
  if (verb === "list") {
    const options = parseListOptions(query);
    return options.ok ? { ok: true, value: { verb: "list", key: key.value, options: options.value } } : options;
  }
  const options = parseWatchOptions(query);
  if (!options.ok) return options;
  const protocol = websocketProtocol(request);
  if (!protocol.ok) return protocol;
  return { ok: true, value: { verb: "watch", key: key.value, options: options.value, ...(protocol.value ? { protocol: protocol.value } : {}) } };
}

/**
 * A live view (`?view=1`, the relay's own: DESIGN.md, "Live views") of a collection: its key as
 * a watch's, what it asks for checked against the resource's Table columns. It is served by the
 * collection's hub, so the resource must be one that can be watched.
 */
function resolveView(path: ResourcePath, resource: ResourceInfo, query: URLSearchParams, request: Request): Result<HubRequest> {
  if (path.name !== undefined || path.legacyWatch) return { ok: false, status: badRequest("a view is of a collection: drop the object's name from the path (filter=name~<text> finds it)") };
  const unsupported = unsupportedVerb(resource, "watch");
  if (unsupported) return { ok: false, status: badRequest(`a view is kept live from a watch of its collection: ${unsupported.message}`) };
  const key = resolveKey(path, resource, query);
  if (!key.ok) return key;
  const view = parseViewSpec(query, columnsFor(path));
  if (!view.ok) return view;
  const watch = isWatch(query);
  const options = parseWatchOptions(query);
  if (!options.ok) return options;
  const protocol = websocketProtocol(request);
  if (!protocol.ok) return protocol;
  return { ok: true, value: { verb: "view", key: key.value, view: view.value, watch, timeoutSeconds: options.value.timeoutSeconds, ...(protocol.value ? { protocol: protocol.value } : {}) } };
}
