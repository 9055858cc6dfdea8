/**
 * Where the Worker sends a hot key's request (src/http/placement.ts), with hubs that say who they
 * are: a list's next page goes on at the hub that holds its snapshot, named by its continue
 * token, so a paged list placed on one replica does not meet another's 410 on its next page.
 */
import { describe, expect, it } from "vitest";
import type { WatchHub } from "../../src/hub/hub.ts";
import { REPLICAS_HEADER, replicaName } from "../../src/hub/replicas.ts";
import type { ReplicaRole } from "../../src/hub/replicas.ts";
import { Placements } from "../../src/http/placement.ts";
import { hubName, watchKey } from "../../src/k8s/key.ts";

describe("a hot key's paged list", () => {
  const key = watchKey({ cluster: "default", group: "", version: "v1", resource: "pods", namespace: "ns", namespaced: true, labelSelector: null, fieldSelector: null });
  const root = hubName(key);
  const [first, second] = [replicaName(root, "local", 1), replicaName(root, "local", 2)];

  /** A root that names two replicas (the second the fuller) for what it does not serve itself, and replicas that serve what they are sent; who served what. */
  function tree() {
    const served: string[] = [];
    const namespace = (role: "root" | "replica") =>
      ({
        getByName: (name: string) => ({
          fetch: async (request: Request) => {
            const here = request.headers.get("x-here") === "true";
            if (role === "root" && !here)
              return new Response(null, {
                status: 307,
                headers: {
                  [REPLICAS_HEADER]: JSON.stringify([
                    { name: first, subscribers: 0 },
                    { name: second, subscribers: 5 },
                  ]),
                },
              });
            served.push(name);
            return new Response("served");
          },
        }),
      }) as unknown as DurableObjectNamespace<WatchHub>;
    const hubs = { roots: namespace("root"), replicas: namespace("replica") };
    const as = (_: ReplicaRole | undefined, __: string, here: boolean) => new Request("http://hub/", { headers: { "x-here": String(here) } });
    return { hubs, as, served };
  }

  it("goes on at the hub that holds its snapshot: the replica its continue token names, or the root; any other page as placed", async () => {
    const placements = new Placements();
    const { hubs, as, served } = tree();
    await placements.send(hubs, key, undefined, as, { holder: second, now: 0 });
    await placements.send(hubs, key, undefined, as, { holder: root, now: 0 });
    // A hub the root did not name is not asked: the page is placed as any request.
    await placements.send(hubs, key, undefined, as, { holder: replicaName(root, "local", 9), now: 0 });
    await placements.send(hubs, key, undefined, as, { now: 0 });
    expect(served).toEqual([second, root, first, first]);
  });
});
