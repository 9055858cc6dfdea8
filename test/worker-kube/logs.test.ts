/**
 * AUTH_MODE=kube and pod logs: the cluster is asked for `get` on `pods/log` of that pod (its
 * SelfSubjectAccessReview names the subresource), and asked again while the log is followed:
 * access revoked ends the follow.
 */
import { describe, expect, it } from "vitest";
import { bearerProtocol } from "../../src/k8s/websocket.ts";
import { relay, Sim, uniqueNamespace } from "../worker/helpers.ts";
import { requestMark } from "../worker/kube-helpers.ts";
import { followSocket, runningPod } from "../worker/log-helpers.ts";

const sim = new Sim("logs");
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The cluster's users: each may read `resources` in `namespace`. */
function grant(namespace: string, users: Record<string, string[]>) {
  return sim.setUsers(
    Object.entries(users).map(([name, resources]) => ({ name, tokens: [`${name}-token`], rules: [{ verbs: ["get", "list", "watch"], apiGroups: [""], resources, namespaces: [namespace] }] })),
  );
}

describe("pod logs in kube mode", () => {
  it("the cluster decides on get pods/log: a grant of pods alone is not one", async () => {
    const ns = uniqueNamespace("kl");
    await runningPod(sim, ns, "web");
    const path = `/clusters/logs/api/v1/namespaces/${ns}/pods/web/log?tailLines=2`;
    // The review names the subresource: a user who may get pods, and not their logs, is refused.
    await grant(ns, { lena: ["pods"], lou: ["pods/log"] });
    const refused = await relay(path, { headers: bearer("lena-token") });
    expect([refused.status, ((await refused.json()) as { message: string }).message]).toEqual([
      403,
      `pods "web" is forbidden: User "lena" cannot get resource "pods/log" in API group "" in the namespace "${ns}"`,
    ]);
    const mark = await requestMark(sim);
    const allowed = await relay(path, { headers: bearer("lou-token") });
    expect(allowed.status).toBe(200);
    expect((await allowed.text()).split("\n")).toHaveLength(3);
    expect((await sim.requests("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", mark)).requests).toHaveLength(1);
  });

  it("access revoked while a log is followed ends the follow (4403)", async () => {
    const ns = uniqueNamespace("kr");
    await runningPod(sim, ns, "web", { intervalMs: 50 });
    await grant(ns, { rita: ["pods/log"] });
    const follower = await followSocket(`/clusters/logs/api/v1/namespaces/${ns}/pods/web/log?follow=true&tailLines=1`, ["binary.k8s.io", bearerProtocol("rita-token")]);
    await follower.until("a line", (f) => f.lines.length > 0);
    await grant(ns, { rita: ["pods"] });
    expect(await follower.end()).toMatchObject({ code: 4403, reason: "access revoked" });
  });
});
