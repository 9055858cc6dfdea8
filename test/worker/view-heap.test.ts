/**
 * Live views of big objects within the isolate's 128 MB (the tests run the relay under the heap a
 * Durable Object has deployed, so a relay that outgrows it fails here): a window of objects is
 * sent in parts its client takes one after another, never as one string, and a group of views
 * caches no more than a part; a page (one answer) too large is refused with the limit it passed.
 */
import { describe, expect, it } from "vitest";
import type { RowChange } from "../../src/k8s/view.ts";
import { applyChanges } from "../../src/k8s/view.ts";
import { pumpLines } from "../kit/lines.ts";
import { podsPath } from "../kit/paths.ts";
import { relay, Sim, uniqueNamespace } from "./helpers.ts";

const sim = new Sim();

type Frame = { type: "VIEW"; count: number; rows: Array<{ key: string }> } | { type: "ROWS"; count: number; changes: Array<RowChange<{ key: string }>> } | { type: "ERROR" };

/** A live view's window as its keys, read from its lines without holding its objects; resolves once it holds `size` rows of `count`. */
async function windowOf(path: string, size: number, count: number): Promise<{ keys: string[]; lines: number; longest: number; stop(): void }> {
  const response = await relay(path);
  expect(response.status).toBe(200);
  let keys: string[] = [];
  let lines = 0;
  let longest = 0;
  let complete: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (complete = resolve));
  const body = pumpLines(response.body as ReadableStream<Uint8Array>, (line) => {
    if (!line.trim()) return;
    lines++;
    longest = Math.max(longest, line.length);
    const frame = JSON.parse(line) as Frame;
    if (frame.type === "ERROR") throw new Error(line);
    if (frame.type === "VIEW") keys = frame.rows.map((r) => r.key);
    else keys = applyChanges(keys, frame.changes.map((c) => ("row" in c ? { ...c, row: c.row.key } : c)) as Array<RowChange<string>>);
    if (keys.length === size && frame.count === count) complete();
  });
  await done;
  return { keys, lines, longest, stop: body.stop };
}

describe("live views of big objects", () => {
  it("three windows of a 24 MB namespace as objects, each a view of its own, come whole in parts; its page, too large for one answer, is a 400 that says what fits", async () => {
    const ns = uniqueNamespace("heap");
    const padding = "x".repeat(1024 * 1024);
    const names = Array.from({ length: 24 }, (_, i) => `p${String(i).padStart(2, "0")}`);
    for (const [i, name] of names.entries()) {
      await sim.createPod(ns, name);
      await sim.patchPod(ns, name, { metadata: { annotations: { padding: `${i}${padding}` } } });
    }
    // Three windows, each its own group: 24, 23 and 22 objects of 1 MB, read together (as one string each, cached, they took the isolate past 128 MB).
    const views = await Promise.all([24, 23, 22].map((limit) => windowOf(`${podsPath(ns)}?view=1&watch=1&rows=object&limit=${limit}`, limit, 24)));
    for (const [i, view] of views.entries()) {
      expect(view.keys).toEqual(names.slice(0, names.length - i).map((n) => `${ns}/${n}`));
      // In parts: an object (more than a part's 256 KiB) a line.
      expect(view.lines).toBeGreaterThanOrEqual(names.length - i);
      expect(view.longest).toBeLessThan(1.5 * 1024 * 1024);
      view.stop();
    }
    const page = await relay(`${podsPath(ns)}?view=1&rows=object&limit=24`);
    expect(page.status).toBe(400);
    expect(await page.json()).toMatchObject({ kind: "Status", code: 400, message: expect.stringMatching(/more than 8 MiB.*limit=7 or fewer/) });
    const fits = await relay(`${podsPath(ns)}?view=1&rows=object&limit=7`);
    expect(fits.status).toBe(200);
    expect(((await fits.json()) as { rows: unknown[] }).rows).toHaveLength(7);
  }, 120_000);
});
