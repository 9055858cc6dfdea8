/**
 * @module
 * List responses from the hub's cache, in the API server's shape
 * (`{kind: XList, apiVersion, metadata: {resourceVersion}, items}`), streamed from the
 * pre-serialised objects so a large snapshot is never built as one string.
 */
import type { CachedObject } from "./cache.ts";

const CHUNK = 64 * 1024;

export interface ListHead {
  listKind: string;
  apiVersion: string;
  resourceVersion: number;
  /** Token for the next page, when there is one. */
  continue?: string | undefined;
  /** Items after this page; the API server gives it only for unfiltered lists. */
  remainingItemCount?: number | undefined;
}

/** A list body as a stream; `objects` must not change while it is read (snapshots never do). */
export function listBody(head: ListHead, objects: readonly CachedObject[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      let text = next === 0 ? `{"kind":"${head.listKind}","apiVersion":"${head.apiVersion}","metadata":${JSON.stringify(listMeta(head))},"items":[` : "";
      while (next < objects.length && text.length < CHUNK) {
        text += (next > 0 ? "," : "") + (objects[next] as CachedObject).json;
        next++;
      }
      if (next >= objects.length) {
        text += "]}\n";
        controller.enqueue(encoder.encode(text));
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(text));
    },
  });
}

function listMeta(head: ListHead): Record<string, string | number> {
  const meta: Record<string, string | number> = { resourceVersion: String(head.resourceVersion) };
  if (head.continue) meta.continue = head.continue;
  if (head.remainingItemCount !== undefined) meta.remainingItemCount = head.remainingItemCount;
  return meta;
}
