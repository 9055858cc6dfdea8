/**
 * @module
 * Relay URLs. A collection URL (`https://relay/api/v1/namespaces/default/pods?labelSelector=app%3Dweb`)
 * names what to watch; the client derives the list URL (the same, over http(s)), the watch URL
 * (ws(s), with its resume parameters) and the relay's stats URL for that collection's hub.
 */
import { parseApiPath } from "../k8s/path.ts";

/** Query parameters that select what is watched; the client sets every other one itself. */
const SELECTORS = ["labelSelector", "fieldSelector"] as const;

const HTTP_SCHEME: Readonly<Record<string, string>> = { "http:": "http:", "https:": "https:", "ws:": "http:", "wss:": "https:" };

/**
 * Validate a collection URL and normalise it to http(s) with only its selectors kept.
 * Relative URLs resolve against the page's location in a browser.
 * @throws TypeError naming what is wrong with the URL.
 */
export function collectionUrl(url: string | URL): URL {
  const base = (globalThis as { location?: { href: string } }).location?.href;
  let parsed: URL;
  try {
    parsed = new URL(url, base);
  } catch {
    throw new TypeError(`"${String(url)}" is not a URL${base === undefined ? " (outside a browser it must be absolute, e.g. http://127.0.0.1:8787/api/v1/pods)" : ""}`);
  }
  const scheme = HTTP_SCHEME[parsed.protocol];
  if (scheme === undefined) throw new TypeError(`${parsed.href}: a relay URL is http(s) or ws(s), not ${parsed.protocol}`);
  const path = parseApiPath(parsed.pathname);
  if (path.kind !== "resource" || path.name !== undefined || path.subresource !== undefined || path.legacyWatch) {
    const why = path.kind === "invalid" ? path.reason : path.kind === "discovery" ? "it is a discovery path" : "it names one object, a subresource or the legacy /watch/ form";
    throw new TypeError(`${parsed.href} is not a collection URL (${why}); expected e.g. ${parsed.origin}/api/v1/namespaces/default/pods`);
  }
  const collection = new URL(`${scheme}//${parsed.host}${parsed.pathname}`);
  for (const name of SELECTORS) {
    const value = parsed.searchParams.get(name);
    if (value) collection.searchParams.set(name, value);
  }
  return collection;
}

/** The WebSocket watch URL: from `resourceVersion`, with bookmarks (resume points on quiet keys), and asking for net changes when `compact`. */
export function watchUrl(collection: URL, resourceVersion: string, timeoutSeconds?: number, compact = false): string {
  const url = new URL(collection);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("watch", "1");
  url.searchParams.set("resourceVersion", resourceVersion);
  url.searchParams.set("allowWatchBookmarks", "true");
  if (timeoutSeconds !== undefined) url.searchParams.set("timeoutSeconds", String(timeoutSeconds));
  if (compact) url.searchParams.set("compact", "true");
  return url.href;
}

/** What a live view asks for (DESIGN.md, "Live views"): its window of the collection, in its order, under its filter. */
export interface ViewQuery {
  sort?: string | undefined;
  filter?: string | undefined;
  offset?: number | undefined;
  /** The window's first row by key, instead of `offset`. */
  anchor?: string | undefined;
  limit?: number | undefined;
  rows?: "cells" | "object" | undefined;
}

/**
 * A live view's URL: `live`, the WebSocket one (ws(s), `watch=1`, ending after `timeoutSeconds`
 * if given); otherwise its window once, over http(s) (which says, as a Status, why a view is refused).
 */
export function viewUrl(collection: URL, view: ViewQuery, live: boolean, timeoutSeconds?: number): string {
  const url = new URL(collection);
  url.searchParams.set("view", "1");
  if (live) {
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("watch", "1");
  }
  for (const name of ["sort", "filter", "offset", "anchor", "limit", "rows"] as const) {
    const value = view[name];
    if (name === "offset" && view.anchor) continue;
    if (value !== undefined && value !== "") url.searchParams.set(name, String(value));
  }
  if (live && timeoutSeconds !== undefined) url.searchParams.set("timeoutSeconds", String(timeoutSeconds));
  return url.href;
}

/**
 * The relay's stats for the hub serving a collection: `{key, subscribers, watching, upstream,
 * resourceVersion, windowStart, windowEvents, objects}`. Relay-specific (not the Kubernetes API).
 */
export function statsUrl(url: string | URL): string {
  const collection = collectionUrl(url);
  return `${collection.origin}/_relay/stats${collection.pathname}${collection.search}`;
}
