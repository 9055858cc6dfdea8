/**
 * @module
 * An upstream's list body as the relay passes it on (the list cache's, held or streamed, and a
 * list no hub holds), read an item at a time (`k8s/list-items.ts`): a shard's part of it (its
 * items, and `shardInfo` in its metadata), its items without `metadata.managedFields` (as a hub
 * keeps them), and one object of it found by name. Never the whole list parsed.
 */
import { ListItems } from "../k8s/list-items.ts";
import { admitsObject, stringAt, type ShardSelector } from "../k8s/shard.ts";

/** What of an upstream list is passed on: only a shard's items, and items without `metadata.managedFields`. */
export interface ListTrim {
  shard?: ShardSelector | undefined;
  stripManagedFields?: boolean | undefined;
}

/**
 * The list trimmed as `trim` says: a shard's with the selector echoed in `metadata.shardInfo`, as
 * the API server writes a sharded list.
 */
export function trimmedList(trim: ListTrim): TransformStream<string, Uint8Array> {
  const items = new ListItems();
  const encoder = new TextEncoder();
  const { shard, stripManagedFields } = trim;
  let written = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const pieces = items.push(chunk);
      let out = "";
      if (pieces.head) {
        const head = shard ? { ...pieces.head, metadata: { ...(pieces.head.metadata as object | undefined), shardInfo: { selector: shard.selector } } } : pieces.head;
        out += `${JSON.stringify(head).slice(0, -1)},"items":[`;
      }
      for (const item of pieces.items) {
        if (shard && !admitsObject(shard, item)) continue;
        out += (written++ > 0 ? "," : "") + (stripManagedFields ? withoutManagedFields(item) : item);
      }
      if (out) controller.enqueue(encoder.encode(out));
    },
    flush(controller) {
      controller.enqueue(encoder.encode("]}\n"));
    },
  });
}

/** An object's JSON without `metadata.managedFields` (who wrote which field: the API server's business, and a large share of every object). */
export function withoutManagedFields(json: string): string {
  if (!json.includes('"managedFields"')) return json;
  const object = JSON.parse(json) as { metadata?: { managedFields?: unknown } };
  if (object.metadata?.managedFields === undefined) return json;
  delete object.metadata.managedFields;
  return JSON.stringify(object);
}

/**
 * The object named `name` in a list body, as a get returns it (with the kind and apiVersion a
 * list's items leave out), or `undefined`. Reads no further than the object.
 */
export async function findItem(body: ReadableStream<Uint8Array>, name: string): Promise<object | undefined> {
  const items = new ListItems();
  let list: { kind: string; apiVersion: string } | undefined;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return undefined;
      const pieces = items.push(value);
      if (pieces.head) list = { kind: String(pieces.head.kind ?? "").replace(/List$/, ""), apiVersion: String(pieces.head.apiVersion ?? "") };
      for (const item of pieces.items) if (stringAt(item, ["metadata", "name"]) === name) return { ...list, ...(JSON.parse(item) as object) };
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
