/**
 * @module
 * A list body, as the list cache holds or streams it, read an item at a time
 * (`k8s/list-items.ts`): a shard's part of it (its items, and `shardInfo` in its metadata), and
 * one object of it found by name. Never the whole list parsed.
 */
import { ListItems } from "../k8s/list-items.ts";
import { admitsObject, stringAt, type ShardSelector } from "../k8s/shard.ts";

/** The list with only the shard's items, and the selector echoed in `metadata.shardInfo`, as the API server writes a sharded list. */
export function shardedList(shard: ShardSelector): TransformStream<string, Uint8Array> {
  const items = new ListItems();
  const encoder = new TextEncoder();
  let written = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const pieces = items.push(chunk);
      let out = "";
      if (pieces.head) {
        const head = { ...pieces.head, metadata: { ...(pieces.head.metadata as object | undefined), shardInfo: { selector: shard.selector } } };
        out += `${JSON.stringify(head).slice(0, -1)},"items":[`;
      }
      for (const item of pieces.items) if (admitsObject(shard, item)) out += (written++ > 0 ? "," : "") + item;
      if (out) controller.enqueue(encoder.encode(out));
    },
    flush(controller) {
      controller.enqueue(encoder.encode("]}\n"));
    },
  });
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
