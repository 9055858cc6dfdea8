/**
 * AUTH_MODE=jwt on a merged key (DESIGN.md, "One watch across clusters"): each member is
 * authorized as its own cluster's request would be; a member the token may not read is left
 * out and named, not a 403 of the whole.
 */
import { describe, expect, it } from "vitest";
import { MEMBERS_LEFT_OUT_HEADER } from "../../src/k8s/members.ts";
import type { KubeObject } from "../../src/k8s/types.ts";
import { jwtFor } from "../kit/tokens.ts";
import { podsPath } from "../kit/paths.ts";
import { httpWatch, relay, Sim, uniqueNamespace } from "../worker/helpers.ts";

const a = new Sim("fleet-a");
const b = new Sim("fleet-b");
const pods = { apiGroups: [""], resources: ["pods"], namespaces: ["*"] };

describe("a merged key with jwt grants per cluster", () => {
  it("serves the members the token may read, names those left out, gets only what it may read in the object's member, and refuses a token that may read none", async () => {
    const ns = uniqueNamespace("fleet");
    await a.createPod(ns, "mine");
    await b.createPod(ns, "theirs");
    const onlyA = { authorization: `Bearer ${await jwtFor("alice", [{ clusters: ["fleet-a"], ...pods }])}` };
    const listed = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}`, { headers: onlyA });
    expect(listed.status).toBe(200);
    expect(listed.headers.get(MEMBERS_LEFT_OUT_HEADER)).toBe("fleet-b");
    expect(((await listed.json()) as { items: KubeObject[] }).items.map((o) => o.metadata?.name)).toEqual(["fleet-a:mine"]);
    const watch = await httpWatch(`/clusters/fleet-a,fleet-b${podsPath(ns)}?watch=1`, onlyA);
    expect(watch.response.headers.get(MEMBERS_LEFT_OUT_HEADER)).toBe("fleet-b");
    expect((await watch.events.next("fleet-a's pod")).object.metadata?.name).toBe("fleet-a:mine");
    watch.close();
    // A get is its member's own: what the token may read there, and the member's 403 where it may not.
    const got = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}/fleet-a:mine`, { headers: onlyA });
    expect(got.status).toBe(200);
    expect(((await got.json()) as KubeObject).metadata?.name).toBe("fleet-a:mine");
    const forbidden = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}/fleet-b:theirs`, { headers: onlyA });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ kind: "Status", code: 403, reason: "Forbidden" });
    const neither = { authorization: `Bearer ${await jwtFor("bob", [{ clusters: ["other"], ...pods }])}` };
    const refused = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}`, { headers: neither });
    expect(refused.status).toBe(403);
    await refused.body?.cancel();
  });

  it("lists a resource without watch (metrics) of the members the token may read, naming those left out, and refuses a token that may read none", async () => {
    const ns = uniqueNamespace("fleet-top");
    for (const [sim, name] of [
      [a, "mine"],
      [b, "theirs"],
    ] as const)
      await sim.create(podsPath(ns), { apiVersion: "v1", kind: "Pod", metadata: { name, namespace: ns }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] }, status: { phase: "Running" } });
    const path = `/clusters/fleet-a,fleet-b/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods`;
    const metrics = { apiGroups: ["metrics.k8s.io"], resources: ["pods"], namespaces: ["*"] };
    const onlyA = { authorization: `Bearer ${await jwtFor("alice", [{ clusters: ["fleet-a"], ...metrics }])}` };
    const listed = await relay(path, { headers: onlyA });
    expect(listed.status).toBe(200);
    expect(listed.headers.get(MEMBERS_LEFT_OUT_HEADER)).toBe("fleet-b");
    expect(((await listed.json()) as { items: KubeObject[] }).items.map((o) => o.metadata?.name)).toEqual(["fleet-a:mine"]);
    const both = { authorization: `Bearer ${await jwtFor("carol", [{ clusters: ["fleet-a", "fleet-b"], ...metrics }])}` };
    const all = await relay(path, { headers: both });
    expect(all.headers.get(MEMBERS_LEFT_OUT_HEADER)).toBeNull();
    expect(((await all.json()) as { items: KubeObject[] }).items.map((o) => o.metadata?.name)).toEqual(["fleet-a:mine", "fleet-b:theirs"]);
    // Pods themselves are not their metrics: a token for pods may read neither member's.
    const podsOnly = { authorization: `Bearer ${await jwtFor("bob", [{ clusters: ["fleet-a", "fleet-b"], ...pods }])}` };
    const refused = await relay(path, { headers: podsOnly });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ kind: "Status", code: 403, reason: "Forbidden" });
  });
});
