import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ListItems, ListItemTooLarge } from "./list-items.ts";

/** `text` cut at `cuts` (positions, any order), pushed piece by piece: the head and the items' texts. */
function split(text: string, cuts: number[]) {
  const items = new ListItems();
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  let head: Record<string, unknown> | undefined;
  const texts: string[] = [];
  let from = 0;
  for (const to of [...at, text.length]) {
    const pieces = items.push(text.slice(from, to));
    if (pieces.head) {
      expect(head).toBeUndefined();
      head = pieces.head;
    }
    texts.push(...pieces.items);
    from = to;
  }
  return { head, texts, ended: items.ended };
}

describe("ListItems", () => {
  it("gives the head once the items begin, then each item's text, however the body is cut", () => {
    const body = '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"a]}{"},"items":[{"a":"}]\\"{["},{"b":[1,{"c":2}]}]}\n';
    for (const cuts of [[], [1, 40, 77, 90], Array.from({ length: body.length }, (_, i) => i)]) {
      expect(split(body, cuts)).toEqual({
        head: { kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "9", continue: "a]}{" } },
        texts: ['{"a":"}]\\"{["}', '{"b":[1,{"c":2}]}'],
        ended: true,
      });
    }
    expect(split('{"kind":"L","items":[]}', [5])).toEqual({ head: { kind: "L" }, texts: [], ended: true });
  });

  it("property: any list, cut anywhere, comes out as its head and its items' texts, in order", () => {
    const object = fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });
    fc.assert(
      fc.property(object, fc.array(object, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 }), (head, list, cuts) => {
        const fields = Object.fromEntries(Object.entries(head).filter(([k]) => k !== "items" && k !== "__proto__"));
        const body = `${JSON.stringify({ ...fields, items: list })}\n`;
        const { head: got, texts, ended } = split(body, cuts);
        expect(got).toEqual(fields);
        expect(texts).toEqual(list.map((o) => JSON.stringify(o)));
        expect(ended).toBe(true);
      }),
      { seed: 91, numRuns: 300 },
    );
  });

  it("refuses an item, or a head, longer than it may be, before more of it is held", () => {
    const item = JSON.stringify({ data: "x".repeat(100) });
    const items = new ListItems(item.length);
    expect(items.push(`{"kind":"L","items":[${item},`).items).toEqual([item]);
    // The next item is refused once it has grown past the limit, not once it ends.
    expect(() => items.push(`{"data":"${"y".repeat(120)}`)).toThrow(ListItemTooLarge);
    expect(() => new ListItems(10).push('{"kind":"LongListKind","metadata":{')).toThrow(ListItemTooLarge);
    // Whole in one chunk, it is refused too.
    expect(() => new ListItems(10).push(`{"kind":"L","items":[${item}]}`)).toThrow(ListItemTooLarge);
  });

  it("gives the head of a list without items when it ends (`items` null, or none)", () => {
    expect(split('{"kind":"L","metadata":{"resourceVersion":"3"},"items":null}', [7])).toEqual({ head: { kind: "L", metadata: { resourceVersion: "3" } }, texts: [], ended: true });
    expect(split('{"kind":"L","metadata":{"resourceVersion":"3"}}', [])).toEqual({ head: { kind: "L", metadata: { resourceVersion: "3" } }, texts: [], ended: true });
  });

  it("skips a string's escapes however the chunks cut them: a backslash at a chunk's end escapes the next chunk's first character", () => {
    const value = 'a\\"b\\\\\\"c\\';
    const body = `{"kind":"L","items":[${JSON.stringify({ v: value })},{"w":1}]}`;
    for (let cut = 0; cut <= body.length; cut++) {
      for (const second of [cut + 1, cut + 2]) expect(split(body, [cut, second]).texts).toEqual([JSON.stringify({ v: value }), '{"w":1}']);
    }
  });
});
