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
}

/** A list body as a stream; `objects` must not change while it is read (snapshots never do). */
export function listBody(head: ListHead, objects: readonly CachedObject[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      let text = next === 0 ? `{"kind":"${head.listKind}","apiVersion":"${head.apiVersion}","metadata":{"resourceVersion":"${head.resourceVersion}"},"items":[` : "";
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
