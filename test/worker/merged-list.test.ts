/**
 * A merged key's list of a resource without watch, made from its members' answers
 * (`src/http/merged-list.ts`): members in order, items renamed as they arrive however the
 * members' bodies are cut, a member late or failing named behind (a late one's body let go),
 * and a body that fails after it began cutting the List short.
 */
import { describe, expect, it } from "vitest";
import { mergedCachedList } from "../../src/http/merged-list.ts";
import { CLUSTER_ANNOTATION, MEMBERS_BEHIND_HEADER } from "../../src/k8s/members.ts";
import type { KubeObject } from "../../src/k8s/types.ts";

const RESOURCE = { group: "metrics.k8s.io", version: "v1beta1", kind: "PodMetrics" };
const encoder = new TextEncoder();

/** A member's list of `names`, its body in chunks of `size` characters (then `fail`, if given). */
function memberList(names: string[], size = 7, fail?: Error): Response {
  const text = JSON.stringify({ kind: "PodMetricsList", apiVersion: "metrics.k8s.io/v1beta1", metadata: {}, items: names.map((name) => ({ metadata: { name, namespace: "ns" }, window: "15s" })) });
  const chunks = Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next !== undefined) controller.enqueue(encoder.encode(next));
        else if (fail) controller.error(fail);
        else controller.close();
      },
    }),
    { headers: { "content-type": "application/json" } },
  );
}

describe("a merged list of a resource without watch", () => {
  it("is one List of the resource's kind: the members in order, each one's items as it gave them, renamed; no resourceVersion", async () => {
    const lists: Record<string, string[]> = { east: ["b", "a"], west: ["a"], empty: [] };
    const response = await mergedCachedList(["east", "empty", "west"], RESOURCE, async (member) => memberList(lists[member]!));
    expect(response.headers.get(MEMBERS_BEHIND_HEADER)).toBeNull();
    const list = (await response.json()) as { kind: string; apiVersion: string; metadata: object; items: KubeObject[] };
    expect([list.kind, list.apiVersion, list.metadata]).toEqual(["PodMetricsList", "metrics.k8s.io/v1beta1", {}]);
    expect(list.items.map((o) => [o.metadata?.name, o.metadata?.annotations?.[CLUSTER_ANNOTATION], o.metadata?.resourceVersion])).toEqual([
      ["east:b", "east", "0"],
      ["east:a", "east", "0"],
      ["west:a", "west", "0"],
    ]);
  });

  it("names behind a member that fails, refuses, or has not answered within the wait, and lets the late one's body go", async () => {
    let cancelled = false;
    let late: (response: Response) => void = () => {};
    const response = await mergedCachedList(
      ["fails", "late", "ok", "refuses"],
      RESOURCE,
      async (member) => {
        if (member === "fails") throw new Error("unreachable");
        if (member === "refuses") return new Response('{"kind":"Status","code":503}', { status: 503 });
        if (member === "late") return new Promise<Response>((resolve) => (late = resolve));
        return memberList(["x"]);
      },
      20,
    );
    expect(response.headers.get(MEMBERS_BEHIND_HEADER)).toBe("fails,late,refuses");
    expect(((await response.json()) as { items: KubeObject[] }).items.map((o) => o.metadata?.name)).toEqual(["ok:x"]);
    const body = new ReadableStream<Uint8Array>({ cancel: () => void (cancelled = true) });
    late(new Response(body));
    await expect.poll(() => cancelled).toBe(true);
  });

  it("is cut short when a member's body fails after it began, and lets the next members' bodies go", async () => {
    let cancelled = false;
    const response = await mergedCachedList(["a", "b"], RESOURCE, async (member) =>
      member === "a" ? memberList(["x", "y"], 7, new Error("the member's connection broke")) : new Response(new ReadableStream({ cancel: () => void (cancelled = true) })),
    );
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    expect(cancelled).toBe(true);
  });
});
