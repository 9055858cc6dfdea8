/**
 * AUTH_MODE=kube needs an upstream that verifies each request's own token. One that
 * authenticates requests itself — `kubectl proxy` with a client-certificate kubeconfig, played
 * here by the `proxied` cluster's simulator — answers every review for its own user, made-up
 * tokens included: the relay must refuse to verify tokens through it rather than grant them
 * that user's rights, and say why; `/readyz` says it is not ready.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.ts";
import { relay, Sim } from "../worker/helpers.ts";

// A cluster no other test file uses.
const proxied = new Sim("proxied");
beforeAll(() => proxied.configure({ clientCertificateUser: "kubernetes-admin" }));

describe("an upstream that answers any token", () => {
  it("is refused for every token with a 503 naming the cause and the fix, never served", async () => {
    for (const token of ["made-up", "another-made-up"]) {
      const response = await relay("/clusters/proxied/api/v1/namespaces/default/pods", { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({
        kind: "Status",
        reason: "ServiceUnavailable",
        message: expect.stringMatching(/answers a review for a made-up token as user "kubernetes-admin".*client certificate.*Point kube mode at the API server itself/),
      });
    }
  });

  it("checks once per isolate and period, not per request", async () => {
    const mark = (await proxied.requests("/_none_")).next;
    for (let i = 0; i < 5; i++) await (await relay("/clusters/proxied/api/v1/pods", { headers: { authorization: `Bearer t-${i}` } })).body?.cancel();
    expect((await proxied.requests("/apis/authentication.k8s.io", mark)).requests).toEqual([]);
  });

  it("makes /readyz answer 503 when it is the default cluster", async () => {
    // Apps of their own (as isolates of their own), so neither shares the other's checks.
    const readyz = (vars: typeof env) => createApp().fetch(new Request("http://relay.test/readyz"), vars, createExecutionContext());
    const ready = await readyz({ ...env, UPSTREAM_URL: proxied.url });
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ kind: "Status", code: 503 });
    const fine = await readyz(env);
    expect([fine.status, await fine.text()]).toEqual([200, "ok\n"]);
  });
});
