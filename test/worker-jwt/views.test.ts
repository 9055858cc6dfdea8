/**
 * AUTH_MODE=jwt: the indexes a hub builds for live views' orders are a quota per subject and per
 * hub (DESIGN.md, "Live views"), an order of a collection small enough to scan takes none, and no
 * subject's builds drop an index an open view reads through. The project's settings: a
 * collection of more than 2 pods needs an index for an order, 3 builds an hour a subject, 12 a hub.
 */
import { describe, expect, it } from "vitest";
import { podsPath } from "../kit/paths.ts";
import { jwtFor } from "../kit/tokens.ts";
import { eventually, relay, Sim, uniqueNamespace } from "../worker/helpers.ts";

const sim = new Sim();
const everyPod = [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }];

/** A subject of its own (quotas outlive a test: each test's subjects are new). */
const subject = async (name: string) => {
  const token = await jwtFor(`${name}-${uniqueNamespace("s")}`, everyPod);
  return { authorization: `Bearer ${token}` };
};

async function namespaceOf(pods: number): Promise<string> {
  const ns = uniqueNamespace("vq");
  for (let i = 0; i < pods; i++) await sim.createPod(ns, `p${i}`, { k: String(i) });
  return ns;
}

/** A view's page by `who`: its status, its Status when refused, and Retry-After. */
async function page(ns: string, sort: string, who: Record<string, string>) {
  const response = await relay(`${podsPath(ns)}?view=1&sort=${sort}`, { headers: who });
  const body = (await response.json()) as { type?: string; kind?: string; code?: number; message?: string };
  return { status: response.status, body, retryAfter: Number(response.headers.get("retry-after") ?? 0) };
}

/** A live view by `who` on a WebSocket, once its window came; `close` ends it. */
async function live(ns: string, sort: string, who: Record<string, string>) {
  const response = await relay(`${podsPath(ns)}?view=1&watch=1&sort=${sort}`, { headers: { upgrade: "websocket", ...who } });
  const socket = response.webSocket;
  if (!socket) return { status: response.status, body: (await response.json()) as { message: string }, close: () => undefined };
  socket.accept();
  const first = await new Promise<string>((resolve) => socket.addEventListener("message", (m) => resolve(m.data as string), { once: true }));
  expect(JSON.parse(first)).toMatchObject({ type: "VIEW" });
  return { status: 200, body: undefined, close: () => socket.close(1000, "done") };
}

/** The key's numbers, as one who may list it reads them. */
async function stats(ns: string): Promise<{ rowsWritten: number; views: number }> {
  const response = await relay(`/_relay/stats${podsPath(ns)}`, { headers: await subject("stats") });
  expect(response.status).toBe(200);
  return (await response.json()) as { rowsWritten: number; views: number };
}

describe("indexes for views' orders", () => {
  it("a subject may have so many built an hour, a hub so many whoever asks, each past it a 429 with Retry-After that names it", async () => {
    const ns = await namespaceOf(3);
    const alice = await subject("alice");
    for (const key of ["a0", "a1", "a2"]) expect((await page(ns, `label:${key}`, alice)).status).toBe(200);
    const spent = await page(ns, "label:a3", alice);
    expect(spent).toMatchObject({ status: 429, body: { kind: "Status", code: 429, message: expect.stringContaining("MAX_VIEW_INDEX_BUILDS_PER_SUBJECT is 3") } });
    expect(spent.retryAfter).toBeGreaterThan(0);
    // An order that has its index costs no build; another subject's builds are its own.
    expect((await page(ns, "label:a0", alice)).status).toBe(200);
    const bob = await subject("bob");
    expect((await page(ns, "label:a3", bob)).status).toBe(200);
    // The hub's 12: bob's 2 more, carol's 3 and dave's 3 make 12 with alice's 3 and bob's first.
    for (const key of ["b1", "b2"]) expect((await page(ns, `label:${key}`, bob)).status).toBe(200);
    for (const who of [await subject("carol"), await subject("dave")])
      for (const key of ["c0", "c1", "c2"]) expect((await page(ns, `label:${key}-${who.authorization.slice(-6)}`, who)).status).toBe(200);
    const full = await page(ns, "label:e0", await subject("erin"));
    expect(full).toMatchObject({ status: 429, body: { code: 429, message: expect.stringContaining("MAX_VIEW_INDEX_BUILDS_PER_HUB is 12") } });
    expect(full.retryAfter).toBeGreaterThan(0);
  });

  it("an order of a collection small enough to scan is read without one, whatever the subject's builds", async () => {
    const big = await namespaceOf(3);
    const small = await namespaceOf(2);
    const frank = await subject("frank");
    for (const key of ["f0", "f1", "f2"]) expect((await page(big, `label:${key}`, frank)).status).toBe(200);
    expect((await page(big, "label:f3", frank)).status).toBe(429);
    // The hub up and listed (in the key's order, which is its table's), then ten orders of its two pods.
    expect((await page(small, "", frank)).status).toBe(200);
    const before = (await stats(small)).rowsWritten;
    for (let i = 0; i < 10; i++) expect((await page(small, `-label:s${i}`, frank)).status).toBe(200);
    // Read, not written: no index of two rows for any of the ten orders.
    expect((await stats(small)).rowsWritten).toBe(before);
  });

  it("no subject's builds drop the index of an open view, and an order that would need one of theirs is a 429 until a view closes", async () => {
    const ns = await namespaceOf(3);
    const viewer = await live(ns, "-label:k", await subject("viewer"));
    // Seven more open views, each of an order of its own: with the viewer's, every index the hub keeps is read through.
    const others = [];
    for (const who of [await subject("s1"), await subject("s2"), await subject("s3")]) {
      for (let i = 0; i < (others.length < 6 ? 3 : 1); i++) others.push(await live(ns, `label:o${others.length}`, who));
    }
    expect(others.map((v) => v.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    const refused = await live(ns, "label:late", await subject("late"));
    expect(refused).toMatchObject({ status: 429, body: { message: expect.stringContaining("read through all 8 indexes") } });
    // A page of an order an open view reads through is served from its index.
    expect((await page(ns, "-label:k", await subject("reader"))).status).toBe(200);
    others[0]?.close();
    await eventually(async () => (await stats(ns)).views === 7, "the closed view to leave");
    expect((await live(ns, "label:late", await subject("late-again"))).status).toBe(200);
    viewer.close();
    for (const view of others) view.close();
  });
});
