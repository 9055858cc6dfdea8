/**
 * @module
 * A list of a resource without watch (metrics.k8s.io's, which `kubectl top` reads) on a merged
 * key (DESIGN.md, "One watch across clusters"): each member's list as a list of that cluster's
 * own is served (its list cache), a few members at a time, then one List of them all: the
 * members in the set's order, each one's items in the order it gave them, renamed and annotated
 * by `mergedObject` as the merged key's other answers have them. No merge hub: with no watch
 * there is no sequence to number, so the list has no resourceVersion (as a member's own, which
 * metrics-server writes without one) and its items `0`, as a merged get has them. A member whose
 * answer fails, or has not begun within `MEMBER_WAIT_MS`, is left out and named behind, as on
 * the merged key's other lists. Items arrive one at a time: the Worker holds one item, not the lists.
 */
import { ListItems } from "../k8s/list-items.ts";
import { MEMBERS_BEHIND_HEADER, mergedObject } from "../k8s/members.ts";
import type { KubeObject } from "../k8s/types.ts";
import { MEMBER_WAIT_MS } from "../hub/merged-upstream.ts";
import { atMost, MEMBER_REVIEWS_AT_ONCE } from "./member-access.ts";

/** What the List is of: its kind and apiVersion are the resource's. */
interface Listed {
  group: string;
  version: string;
  kind: string;
}

/** A member's answer, once it has begun within the wait; `undefined` when it failed or has not. */
async function answerOf(list: Promise<Response>, waitMs: number): Promise<Response | undefined> {
  let stop = () => {};
  const late = new Promise<undefined>((resolve) => {
    const timer = setTimeout(resolve, waitMs);
    stop = () => clearTimeout(timer);
  });
  const answered = list.then(
    (response) => response,
    () => undefined,
  );
  const first = await Promise.race([answered, late]);
  stop();
  if (first === undefined) {
    // One that begins after the wait is not read: its body is let go.
    void answered.then((response) => response?.body?.cancel());
    return undefined;
  }
  if (first.status === 200 && first.body) return first;
  await first.body?.cancel();
  return undefined;
}

/**
 * One List of every member's list: `list(member)` is that member's, as its cluster's own list is
 * answered. `waitMs`: how long a member's answer may take to begin.
 */
export async function mergedCachedList(members: readonly string[], resource: Listed, list: (member: string) => Promise<Response>, waitMs = MEMBER_WAIT_MS): Promise<Response> {
  const answers = await atMost(members, MEMBER_REVIEWS_AT_ONCE, (member) => answerOf(list(member), waitMs));
  const answered = members.flatMap((member, i) => (answers[i] ? [{ member, body: answers[i].body as ReadableStream<Uint8Array> }] : []));
  const behind = members.filter((_, i) => answers[i] === undefined);
  const headers = new Headers({ "content-type": "application/json", "cache-control": "no-cache, private" });
  if (behind.length > 0) headers.set(MEMBERS_BEHIND_HEADER, behind.join(","));
  const head = { kind: `${resource.kind}List`, apiVersion: resource.group ? `${resource.group}/${resource.version}` : resource.version, metadata: {} };
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  void write(writable.getWriter(), `${JSON.stringify(head).slice(0, -1)},"items":[`, answered);
  return new Response(readable, { status: 200, headers });
}

/** The List's body: its head, each member's items renamed as they arrive, its end. A member's body that fails cuts the List short, as a failed stream does. */
async function write(writer: WritableStreamDefaultWriter<Uint8Array>, head: string, answered: ReadonlyArray<{ member: string; body: ReadableStream<Uint8Array> }>): Promise<void> {
  const encoder = new TextEncoder();
  let next = 0;
  try {
    await writer.write(encoder.encode(head));
    let written = 0;
    for (; next < answered.length; next++) {
      const { member, body } = answered[next]!;
      const items = new ListItems();
      const reader = body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          let out = "";
          for (const item of items.push(value).items) out += (written++ > 0 ? "," : "") + JSON.stringify(mergedObject(member, JSON.parse(item) as KubeObject, 0));
          if (out) await writer.write(encoder.encode(out));
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
    }
    await writer.write(encoder.encode("]}\n"));
    await writer.close();
  } catch (error) {
    for (const { body } of answered.slice(next + 1)) await body.cancel().catch(() => undefined);
    await writer.abort(error).catch(() => undefined);
  }
}
