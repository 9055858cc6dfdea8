/**
 * Lists gzip-coded for a client that takes gzip (kubectl, client-go, undici's fetch), each page
 * compressed once for every client that asks for it; watches never held back by a coding.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { httpWatch, nameOf, relay, Sim, uniqueNamespace } from "./helpers.ts";
import { podsPath } from "../kit/paths.ts";

const sim = new Sim();

type Stats = { listsGzip: { compressed: number; shared: number } };
const stats = async (ns: string) => (await (await relay(`/_relay/stats${podsPath(ns)}`)).json()) as Stats;

/** A request to the relay whose answer is read as it was sent, its coding not undone by the runtime. */
function sent(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(new Request(`http://relay.test${path}`, { headers }), { encodeResponseBody: "manual" });
}

/** What a gzip reader makes of a body, and whether it was gzip at all (its magic bytes). */
async function gunzipped(response: Response): Promise<{ magic: boolean; text: string }> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const text = await new Response(new Response(bytes).body!.pipeThrough(new DecompressionStream("gzip"))).text();
  return { magic: bytes[0] === 0x1f && bytes[1] === 0x8b, text };
}

async function namespaceOf(prefix: string, pods: number): Promise<string> {
  const ns = uniqueNamespace(prefix);
  for (let i = 0; i < pods; i++) await sim.createPod(ns, `p${i}`);
  return ns;
}

describe("gzip-coded lists", () => {
  it("a list for a client that takes gzip is gzip-coded, and decodes to exactly the list another client gets uncoded", async () => {
    const ns = await namespaceOf("gz", 5);
    // (The first list of the key also makes its hub, and is read as the hub stages it.)
    const plain = await relay(podsPath(ns));
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("vary")).toBe("accept-encoding");
    const text = await plain.text();
    const rv = (JSON.parse(text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;

    const coded = await sent(`${podsPath(ns)}?resourceVersion=${rv}`, { "accept-encoding": "gzip" });
    expect(coded.status).toBe(200);
    expect(coded.headers.get("content-encoding")).toBe("gzip");
    expect(coded.headers.get("vary")).toBe("accept-encoding");
    expect(coded.headers.get("content-type")).toBe("application/json");
    const decoded = await gunzipped(coded);
    expect(decoded.magic).toBe(true);
    expect(decoded.text).toBe(text);
  });

  it("clients asking for the same page share one compression of it; another page is compressed once too", async () => {
    const ns = await namespaceOf("gz-share", 6);
    // The hub made, and its first list whole: a list of a cold key is read as the hub stages it, at its own pace, uncoded.
    expect((await relay(podsPath(ns))).status).toBe(200);
    const gzip = { "accept-encoding": "gzip, deflate, br" };
    const first = await sent(`${podsPath(ns)}?limit=3`, gzip);
    const second = await sent(`${podsPath(ns)}?limit=3`, gzip);
    const [a, b] = [await gunzipped(first), await gunzipped(second)];
    expect(a.text).toBe(b.text);
    const page = JSON.parse(a.text) as { items: unknown[]; metadata: { continue: string } };
    expect(page.items).toHaveLength(3);
    expect((await stats(ns)).listsGzip).toEqual({ compressed: 1, shared: 1 });

    // The next page, by two clients at once.
    const next = `${podsPath(ns)}?limit=3&continue=${page.metadata.continue}`;
    const [c, d] = await Promise.all([sent(next, gzip).then(gunzipped), sent(next, gzip).then(gunzipped)]);
    expect(c.text).toBe(d.text);
    expect((JSON.parse(c.text) as { items: Array<{ metadata: { name: string } }> }).items.map((o) => o.metadata.name)).toEqual(["p3", "p4", "p5"]);
    expect((await stats(ns)).listsGzip).toEqual({ compressed: 2, shared: 2 });
  });

  it("identity, no Accept-Encoding, gzip at q=0, and a Table are sent uncoded", async () => {
    const ns = await namespaceOf("gz-no", 2);
    expect((await relay(podsPath(ns))).status).toBe(200);
    const asked: Array<Record<string, string>> = [{ "accept-encoding": "identity" }, {}, { "accept-encoding": "gzip;q=0, identity" }, { "accept-encoding": "br" }];
    for (const headers of asked) {
      const response = await sent(podsPath(ns), headers);
      expect(response.headers.get("content-encoding"), JSON.stringify(headers)).toBeNull();
      expect(((await response.json()) as { items: unknown[] }).items).toHaveLength(2);
    }
    const table = await sent(podsPath(ns), { "accept-encoding": "gzip", accept: "application/json;as=Table;v=v1;g=meta.k8s.io" });
    expect(table.headers.get("content-encoding")).toBeNull();
    expect(((await table.json()) as { rows: unknown[] }).rows).toHaveLength(2);
    expect((await stats(ns)).listsGzip).toEqual({ compressed: 0, shared: 0 });
  });
});

describe("gzip-coded lists of a resource without watch (the list cache)", () => {
  it("a list held for the interval is gzip-coded for the clients that take it, and decodes to what the others get", async () => {
    const path = `/apis/metrics.k8s.io/v1beta1/pods?labelSelector=${encodeURIComponent(`app!=${uniqueNamespace("gz-cache")}`)}`;
    // Together: one upstream list, held, for all four.
    const [plain, ...coded] = await Promise.all([sent(path), sent(path, { "accept-encoding": "gzip" }), sent(path, { "accept-encoding": "gzip" }), sent(path, { "accept-encoding": "gzip" })]);
    expect(plain!.headers.get("content-encoding")).toBeNull();
    const text = await plain!.text();
    expect((JSON.parse(text) as { kind: string }).kind).toBe("PodMetricsList");
    for (const response of coded) {
      expect(response.headers.get("content-encoding")).toBe("gzip");
      const decoded = await gunzipped(response);
      expect(decoded.magic).toBe(true);
      expect(decoded.text).toBe(text);
    }
  });
});

describe("watches of a client that takes gzip", () => {
  it("are sent uncoded and untransformed, each event as it is committed", async () => {
    const ns = await namespaceOf("gz-watch", 1);
    const watch = await httpWatch(`${podsPath(ns)}?watch=1`, { "accept-encoding": "gzip" });
    try {
      expect(watch.response.headers.get("content-encoding")).toBe("identity");
      expect(watch.response.headers.get("cache-control")).toContain("no-transform");
      expect(nameOf(await watch.events.next())).toBe("p0");
      // One event written upstream arrives alone: no coding holds it for a buffer to fill.
      await sim.createPod(ns, "later");
      const event = await watch.events.next();
      expect([event.type, nameOf(event)]).toEqual(["ADDED", "later"]);
    } finally {
      watch.close();
    }
  });
});
