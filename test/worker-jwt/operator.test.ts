/**
 * AUTH_MODE=jwt: `/metrics` and `/_relay/hubs` are the relay's own resources (group
 * relay.kube-watch-relay.dev): a token needs a rule naming them, a reader of pods gets 403, no
 * token 401; `/metrics` also takes the METRICS_TOKEN secret, for scrapers. What they say of a
 * hub's upstream follows the hub within a second, not its next heartbeat.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RELAY_GROUP } from "../../src/auth/operator.ts";
import { DEFAULT_CLUSTER, hubName, watchKey } from "../../src/k8s/key.ts";
import type { Rule } from "../../src/auth/rules.ts";
import type { HubIndexEntry } from "../../src/metrics/report.ts";
import { eventually, relay, Sim, uniqueNamespace, wsWatch } from "../worker/helpers.ts";
import { scrape, metricValue } from "../worker/metrics-helpers.ts";
import { podsPath } from "../kit/paths.ts";
import { jwtFor } from "../kit/tokens.ts";

const METRICS_TOKEN = "scraper-token-for-the-tests";
/** A change of a hub's upstream state is reported within a second; the rest is slack for a loaded machine. */
const STATE_REPORTED_MS = 2_000;
const sim = new Sim();

const token = (sub: string, rules: Rule[]) => jwtFor(sub, rules);
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const podReader = () => token("alice", [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }]);
const operatorOf = (...resources: string[]) => token("ops", [{ apiGroups: [RELAY_GROUP], resources, namespaces: ["*"] }]);

async function status(path: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await relay(path, { headers });
  await response.body?.cancel();
  return response.status;
}

describe("operator endpoints in AUTH_MODE=jwt", () => {
  it("/metrics: 401 without a token, 403 for a reader of pods, 200 with the metrics rule or METRICS_TOKEN", async () => {
    expect(await status("/metrics")).toBe(401);
    expect(await status("/metrics", bearer(await podReader()))).toBe(403);
    expect(await status("/metrics", bearer(await operatorOf("hubs")))).toBe(403);
    expect(await status("/metrics", bearer("not-the-scraper-token"))).toBe(401);
    const families = await scrape(bearer(await operatorOf("metrics")));
    // The refusals above were counted, by reason.
    expect(metricValue(families, "kube_watch_relay_auth_refusals_total", { reason: "unauthenticated" })).toBeGreaterThanOrEqual(2);
    expect(metricValue(families, "kube_watch_relay_auth_refusals_total", { reason: "forbidden" })).toBeGreaterThanOrEqual(2);
    await scrape(bearer(METRICS_TOKEN));
    // The scraper's token opens /metrics only.
    expect(await status("/_relay/hubs", bearer(METRICS_TOKEN))).toBe(401);
    expect(await status("/api/v1/pods", bearer(METRICS_TOKEN))).toBe(401);
  });

  it("/_relay/hubs: refused without the hubs rule; with it, the live keys", async () => {
    expect(await status("/_relay/hubs")).toBe(401);
    expect(await status("/_relay/hubs", bearer(await podReader()))).toBe(403);
    expect(await status("/_relay/hubs", bearer(await operatorOf("metrics")))).toBe(403);

    const ns = uniqueNamespace("ops");
    await sim.createPod(ns, "a");
    const sub = await wsWatch(`/api/v1/namespaces/${ns}/pods?watch=1`, bearer(await podReader()));
    await sub.events.next();
    const operator = bearer(await operatorOf("hubs"));
    const entry = await eventually(async () => {
      const response = await relay("/_relay/hubs", { headers: operator });
      expect(response.status).toBe(200);
      return ((await response.json()) as { hubs: HubIndexEntry[] }).hubs.find((h) => h.key === `default:/api/v1/namespaces/${ns}/pods`);
    }, "the watched key in the hub index");
    expect(entry.subscribers).toEqual({ websocket: 1, http: 0 });
    sub.close();
  });

  it("a hub's upstream state reads watching in the hub index and kube_watch_relay_hubs within a second of its watch opening", async () => {
    const ns = uniqueNamespace("state");
    await sim.createPod(ns, "a");
    const sub = await wsWatch(`${podsPath(ns)}?watch=1`, bearer(await podReader()));
    await sub.events.next();
    // When the hub's own upstream watch opened, as the hub itself says (not as it reported).
    const key = watchKey({ cluster: DEFAULT_CLUSTER, group: "", version: "v1", resource: "pods", namespace: ns, namespaced: true, labelSelector: null, fieldSelector: null });
    const hub = env.WATCH_HUB.getByName(hubName(key));
    await eventually(async () => (await hub.stats())?.upstream === "watching", "the hub's upstream watch to open");
    // Its first report (at its first request) said listing: its next says watching, within a
    // second of the change (and some slack for a loaded machine), not on the heartbeat 30 s later.
    const operator = bearer(await operatorOf("hubs"));
    const entry = await eventually(
      async () => {
        const response = await relay("/_relay/hubs", { headers: operator });
        const hubs = ((await response.json()) as { hubs: HubIndexEntry[] }).hubs;
        return hubs.find((h) => h.key === `${DEFAULT_CLUSTER}:${podsPath(ns)}` && h.upstream === "watching");
      },
      "the hub index to say the hub is watching",
      STATE_REPORTED_MS,
    );
    expect(entry.watching).toBe(true);
    const families = await scrape(bearer(METRICS_TOKEN));
    // Every hub of this file's relay has had its watch open longer than that.
    expect(metricValue(families, "kube_watch_relay_hubs", { cluster: DEFAULT_CLUSTER, upstream_state: "listing" })).toBe(0);
    expect(metricValue(families, "kube_watch_relay_hubs", { cluster: DEFAULT_CLUSTER, upstream_state: "watching" })).toBeGreaterThanOrEqual(1);
    sub.close();
  });
});
