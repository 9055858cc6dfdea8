/**
 * AUTH_MODE=kube on a merged key (DESIGN.md, "One watch across clusters"): each member's own
 * cluster says who the token is and what it may read there. A member that says no, does not
 * accept the token, or cannot be asked is left out and named, not a 403 of the whole; a member
 * that stops allowing a watch ends it, as a cluster's own does.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { MEMBERS_LEFT_OUT_HEADER } from "../../src/k8s/members.ts";
import type { KubeObject, WatchEvent } from "../../src/k8s/types.ts";
import { BATCH_PROTOCOL, bearerProtocol } from "../../src/k8s/websocket.ts";
import { podsPath } from "../kit/paths.ts";
import { httpWatch, relay, Sim, uniqueNamespace } from "../worker/helpers.ts";
import { names as socketNames, relaySocket, untilClosed } from "../worker/socket-helpers.ts";

const home = new Sim();
const a = new Sim("fleet-a");
const b = new Sim("fleet-b");
const read = [{ verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"] }];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
type User = { name: string; tokens: string[]; rules: typeof read };
const user = (name: string, rules: typeof read = []): User => ({ name, tokens: [`${name}-token`], rules });

let ns: string;
beforeEach(async () => {
  ns = uniqueNamespace("fleet");
  await a.createPod(ns, "mine");
  await b.createPod(ns, "theirs");
});

async function names(response: Response): Promise<string[]> {
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: KubeObject[] }).items.map((o) => o.metadata?.name ?? "").sort();
}

describe("a merged key in AUTH_MODE=kube, each member asked with the token", () => {
  it("serves the members the token may read; one that says no, does not accept the token, or cannot be asked is left out and named; a get is its member's to allow", async () => {
    // kim may read pods in both; ken in fleet-a only (fleet-b knows him, and says no); lee is a user of fleet-a alone (fleet-b answers 401).
    await a.setUsers([user("kim", read), user("ken", read), user("lee", read)]);
    await b.setUsers([user("kim", read), user("ken")]);
    const both = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}`, { headers: bearer("kim-token") });
    expect(both.headers.get(MEMBERS_LEFT_OUT_HEADER)).toBeNull();
    expect(await names(both)).toEqual(["fleet-a:mine", "fleet-b:theirs"]);
    for (const token of ["ken-token", "lee-token"]) {
      const listed = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}`, { headers: bearer(token) });
      expect(listed.headers.get(MEMBERS_LEFT_OUT_HEADER), token).toBe("fleet-b");
      expect(await names(listed)).toEqual(["fleet-a:mine"]);
    }
    // A get is its member's own: ken's in fleet-a, and fleet-b's 403; fleet-b's 401 for lee, whose token it does not accept.
    const got = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}/fleet-a:mine`, { headers: bearer("ken-token") });
    expect(got.status).toBe(200);
    expect(((await got.json()) as KubeObject).metadata?.name).toBe("fleet-a:mine");
    for (const [token, code] of [
      ["ken-token", 403],
      ["lee-token", 401],
    ] as const) {
      const refused = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}/fleet-b:theirs`, { headers: bearer(token) });
      expect(refused.status, token).toBe(code);
      expect(await refused.json()).toMatchObject({ kind: "Status", code });
    }
    // `down` is configured, and nothing listens there: its review cannot be made.
    const unreachable = await relay(`/clusters/down,fleet-a${podsPath(ns)}`, { headers: bearer("kim-token") });
    expect(unreachable.headers.get(MEMBERS_LEFT_OUT_HEADER)).toBe("down");
    expect(await names(unreachable)).toEqual(["fleet-a:mine"]);
    const watch = await httpWatch(`/clusters/fleet-a,fleet-b${podsPath(ns)}?watch=1`, bearer("ken-token"));
    expect(watch.response.headers.get(MEMBERS_LEFT_OUT_HEADER)).toBe("fleet-b");
    expect((await watch.events.next("fleet-a's pod")).object.metadata?.name).toBe("fleet-a:mine");
    watch.close();
  });

  it("a token no member lets read gets the 403 Status; one no member accepts, 401", async () => {
    await a.setUsers([user("nat")]);
    await b.setUsers([user("nat")]);
    const refused = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}`, { headers: bearer("nat-token") });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ kind: "Status", code: 403, reason: "Forbidden", message: expect.stringContaining('User "nat" cannot list resource "pods"') });
    const stranger = await relay(`/clusters/fleet-a,fleet-b${podsPath(ns)}`, { headers: bearer("stolen") });
    expect(stranger.status).toBe(401);
    expect(await stranger.json()).toMatchObject({ kind: "Status", code: 401 });
  });

  it("a relay socket's watch of a merged key asks each member with the socket's token, as the HTTP route does; one no member accepts the token for ends alone", async () => {
    // The socket signs in with the default cluster; each op's members are asked as the merged route asks them: fleet-a lets kia read, fleet-b does not know kia.
    const token = `kia-token-${ns}`;
    const kia = { name: "kia", tokens: [token], rules: read };
    await home.setUsers([kia]);
    await a.setUsers([kia]);
    await b.setUsers([]);
    const socket = await relaySocket({ "sec-websocket-protocol": `${BATCH_PROTOCOL}, ${bearerProtocol(token)}` }, null);
    socket.send({ op: "watch", id: "fleet", path: `/clusters/fleet-a,fleet-b${podsPath(ns)}` });
    expect(await socketNames(socket.lines("fleet"), 1)).toEqual(["ADDED fleet-a:mine"]);
    // fleet-b is left out: its changes are not sent; fleet-a's are.
    await b.createPod(ns, "not-for-kia");
    await a.createPod(ns, "later");
    expect(await socketNames(socket.lines("fleet"), 1)).toEqual(["ADDED fleet-a:later"]);
    // A set whose only member does not take the token: that watch ends with the route's 401, and the socket (whose cluster takes it) goes on.
    socket.send({ op: "watch", id: "none", path: `/clusters/fleet-b,${podsPath(ns)}` });
    const ended = await untilClosed(socket.lines("none"));
    expect(ended[0]).toMatchObject({ type: "ERROR", object: { code: 401 } });
    expect(ended.at(-1)).toMatchObject({ type: "CLOSED", code: 1000 });
    await a.createPod(ns, "after");
    expect(await socketNames(socket.lines("fleet"), 1)).toEqual(["ADDED fleet-a:after"]);
    socket.close();
  });

  it("a member that stops allowing the watch ends it with 403 within the re-check interval", async () => {
    await a.setUsers([user("max", read)]);
    await b.setUsers([user("max", read)]);
    const watch = await httpWatch(`/clusters/fleet-a,fleet-b${podsPath(ns)}?watch=1`, bearer("max-token"));
    expect(watch.response.headers.get(MEMBERS_LEFT_OUT_HEADER)).toBeNull();
    expect([(await watch.events.next("a pod")).object.metadata?.name, (await watch.events.next("the other")).object.metadata?.name].sort()).toEqual(["fleet-a:mine", "fleet-b:theirs"]);
    // Re-checked while both members allow it (AUTH_RECHECK_SECONDS is 1 in tests), the watch goes on.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await b.createPod(ns, "later");
    expect(await watch.events.next("the later pod")).toMatchObject({ type: "ADDED", object: { metadata: { name: "fleet-b:later" } } });
    await b.setUsers([user("max")]);
    let event: WatchEvent;
    do event = await watch.events.next("the watch's end");
    while (event.type !== "ERROR");
    expect(event.object).toMatchObject({ kind: "Status", code: 403, message: expect.stringContaining("access was revoked during the watch") });
    watch.close();
  });

  it("the clusters' names: for a token one of them accepts, as /clusters/* is; a token none accepts, refused without them", async () => {
    await a.setUsers([user("kay")]);
    const named = await relay("/_relay/clusters", { headers: bearer("kay-token") });
    expect(named.status).toBe(200);
    expect(await named.json()).toMatchObject({ kind: "ClusterNames", names: expect.arrayContaining(["default", "fleet-a", "fleet-b"]) });
    // Every configured cluster asked about a token none knows: 401, or 429 once the reviews of new tokens are used up.
    const stranger = await relay("/_relay/clusters", { headers: bearer("stolen") });
    expect([401, 429]).toContain(stranger.status);
    const refusal = await stranger.text();
    expect(JSON.parse(refusal)).toMatchObject({ kind: "Status", code: stranger.status });
    expect(refusal).not.toContain("fleet-a");
  });
});
