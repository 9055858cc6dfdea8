/**
 * @module
 * An upstream list response read as it streams in, never held whole: its head, then its items'
 * texts a chunk at a time (`k8s/list-items.ts`), from a body read in reads of at least 64 KiB
 * where the runtime can. An item longer than any object a hub can store fails the list before
 * more of it is held.
 */
import { ListItems, ListItemTooLarge, type ListPieces } from "../k8s/list-items.ts";
import type { KubeObject } from "../k8s/types.ts";
import { UPSTREAM_OBJECT_CHARS } from "./row-limit.ts";
import { tooLarge, UpstreamError } from "./upstream-error.ts";

/**
 * An upstream list response read as it streams in (`k8s/list-items.ts`): its head (kind,
 * apiVersion, metadata), read before the items; then each call of `next` the items of the next
 * chunk, as their texts (`undefined` once the list has ended). No item longer than
 * `UPSTREAM_OBJECT_CHARS` is held: the list fails with `ObjectTooLarge` first.
 */
export async function openList(response: Response, url: string): Promise<{ head: Record<string, unknown>; rv: number; next(): Promise<string[] | undefined>; cancel(): void }> {
  if (!response.body) throw new UpstreamError(502, `the upstream answered ${url} with no body`);
  const reader = bytesOf(response.body);
  const decoder = new TextDecoder();
  const parts = new ListItems(UPSTREAM_OBJECT_CHARS);
  const cancel = () => reader.cancel();
  let early: string[] = [];
  const read = async (): Promise<ListPieces> => {
    const value = await reader.read();
    if (value === undefined) throw new UpstreamError(502, `the upstream's list ${url} ended before its last item`);
    try {
      return parts.push(decoder.decode(value, { stream: true }));
    } catch (e) {
      if (e instanceof ListItemTooLarge) throw tooLarge(`an object of the upstream's list ${url}`, e.chars);
      throw new UpstreamError(502, `the upstream answered ${url} with invalid JSON: ${(e as Error).message}`);
    }
  };
  let head: Record<string, unknown> | undefined;
  try {
    while (!head) {
      const pieces = await read();
      head = pieces.head;
      early = early.concat(pieces.items);
    }
  } catch (e) {
    cancel();
    throw e;
  }
  const rv = Number((head.metadata as { resourceVersion?: string } | undefined)?.resourceVersion);
  if (typeof head.kind !== "string" || !head.kind || !Number.isSafeInteger(rv)) {
    cancel();
    throw new UpstreamError(502, "the upstream list is not a Kubernetes list (no kind, items or metadata.resourceVersion)");
  }
  return {
    head,
    rv,
    async next() {
      if (early.length > 0 || parts.ended) {
        const items = early;
        early = [];
        return items.length > 0 ? items : undefined;
      }
      return (await read()).items;
    },
    cancel,
  };
}

/** A list page is read this much at a time, at least, where the runtime can (a response's chunks are a few KiB each). */
const READ_AT_LEAST = 64 * 1024;

/**
 * A body's bytes, `READ_AT_LEAST` a read (the runtime's `readAtLeast`, into one buffer used
 * again and again) where its stream is one of bytes, else chunk by chunk; `undefined` at the end.
 * The bytes a read gives are good until the next read.
 */
function bytesOf(body: ReadableStream<Uint8Array>): { read(): Promise<Uint8Array | undefined>; cancel(): void } {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream (a test's): read as it comes.
  }
  if (byob && typeof byob.readAtLeast === "function") {
    const reader = byob;
    let buffer = new Uint8Array(4 * READ_AT_LEAST);
    return {
      async read() {
        const { value } = await reader.readAtLeast(READ_AT_LEAST, buffer);
        if (value === undefined || value.byteLength === 0) return undefined;
        buffer = new Uint8Array(value.buffer);
        return value;
      },
      cancel: () => void reader.cancel().catch(() => undefined),
    };
  }
  byob?.releaseLock();
  const reader = body.getReader();
  return {
    async read() {
      const { done, value } = await reader.read();
      return done ? undefined : value;
    },
    cancel: () => void reader.cancel().catch(() => undefined),
  };
}

/** A list item's text as an object. */
export function parseItem(text: string, url: string): KubeObject {
  try {
    return JSON.parse(text) as KubeObject;
  } catch (e) {
    throw new UpstreamError(502, `the upstream answered ${url} with invalid JSON: ${(e as Error).message}`);
  }
}
