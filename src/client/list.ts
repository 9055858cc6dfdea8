/**
 * @module
 * GET a collection: the list a watch starts from, and relists after a 410. Failures come back
 * as `WatchError`s that say whether retrying can help.
 */
import { retryAfterMs } from "../k8s/backoff.ts";
import type { KubeList, Status } from "../k8s/types.ts";
import { httpError, protocolError, statusError, unreachable, type WatchError } from "./errors.ts";
import { authorization } from "./transport.ts";
import type { Transport } from "./types.ts";

export async function listCollection<T>(transport: Transport, url: string, token: string | undefined, signal?: AbortSignal): Promise<KubeList<T>> {
  if (transport.list) return transport.list<T>(url, token, signal);
  let response: Response;
  try {
    response = await transport.fetch(url, { headers: { accept: "application/json", ...authorization(token) }, ...(signal ? { signal } : {}) });
  } catch (e) {
    throw unreachable(url, e);
  }
  const text = await response.text();
  const body = parse(text);
  if (!response.ok) throw responseError(`GET ${url}`, response, text);
  const list = body as Partial<KubeList<T>> | undefined;
  if (typeof list?.metadata?.resourceVersion !== "string" || !Array.isArray(list.items)) {
    throw protocolError(`GET ${url} answered ${response.status} with something that is not a Kubernetes list (${text.slice(0, 80)})`);
  }
  return list as KubeList<T>;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A refused request as the error that says why: the relay's `Status` when the body is one. */
export function responseError(what: string, response: Response, text: string): WatchError {
  const wait = retryAfterMs(response.headers.get("retry-after"));
  const status = parse(text) as Status | undefined;
  return status?.kind === "Status" ? statusError(what, { ...status, code: status.code ?? response.status }, wait) : httpError(what, response.status, wait);
}
