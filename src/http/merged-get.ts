/**
 * @module
 * A get on a merged key (DESIGN.md, "One watch across clusters"): `<cluster>:<name>` names that
 * member's object, got as a get of its own cluster's is (`reads.ts`: a live hub that holds it,
 * else one upstream get) and answered renamed and annotated as the merged key's lists and
 * watches have it (`mergedObject`). Its resourceVersion is `0`: only the merge hub numbers
 * objects, as they arrive in its sequence, which a get is no part of; `0` is older than any
 * number it gives out, and the member's own resourceVersion is in its annotation. A
 * resourceVersion the client asks with is a merged number, which the member does not know: the
 * member is read as current, which no number given out is newer than.
 */
import { mergedObject, splitMergedName } from "../k8s/members.ts";
import { notFound, statusResponse, type Result } from "../k8s/status.ts";
import type { KubeObject } from "../k8s/types.ts";
import type { HubRequest } from "../hub/request.ts";

type GetRequest = Extract<HubRequest, { verb: "get" }>;

/** What a 404 names: the resource as the path has it. */
interface Named {
  resource: string;
  group: string;
}

/** A merged get as its member's own: the member, its get, and the client's request as that get reads it. */
export interface MemberGet {
  member: string;
  request: GetRequest;
  raw: Request;
}

/** The member's get a merged get names, or the API server's `404` for the object as asked (no `<cluster>:`, or a cluster not in the set). */
export function memberGet(raw: Request, request: GetRequest, members: readonly string[], path: Named): Result<MemberGet> {
  const named = splitMergedName(request.name);
  if (!named || !members.includes(named.cluster)) return { ok: false, status: notFound(path.resource, request.name, path.group) };
  const exact = request.options.resourceVersion.kind === "exact";
  const url = new URL(raw.url);
  if (exact) url.searchParams.delete("resourceVersion");
  return {
    ok: true,
    value: {
      member: named.cluster,
      request: { ...request, key: { ...request.key, cluster: named.cluster }, name: named.name, options: exact ? { resourceVersion: { kind: "unset" } } : request.options },
      raw: exact ? new Request(url, raw) : raw,
    },
  };
}

/** The member's answer as the merged get's: its object renamed, its `404` naming the object as asked; any other refusal as the member gave it. */
export async function mergedGetAnswer(response: Response, member: string, asked: string, path: Named): Promise<Response> {
  if (response.status === 404) {
    await response.body?.cancel();
    return statusResponse(notFound(path.resource, asked, path.group));
  }
  if (response.status !== 200) return response;
  const object = (await response.json()) as KubeObject;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(`${JSON.stringify(mergedObject(member, object, 0))}\n`, { status: 200, headers });
}
