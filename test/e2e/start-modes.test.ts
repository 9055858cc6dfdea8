/**
 * `npm start` in every AUTH_MODE, three launchers started at the same moment: each becomes
 * ready, answers its health endpoints without a token, and keeps serving an authorised watch
 * for longer than any timeout inside the launcher.
 */
import { sign } from "hono/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { simulatorUrl } from "./kube.ts";
import { running, startRelay, type RunningRelay } from "./harness.ts";

const SECRET = "start-modes-secret-long-enough-for-hs256";
/**
 * How long each relay must keep serving after it said it was ready: past every deadline the
 * launcher sets itself (45 s from the runtime's start, which is before "ready"), and past the
 * 60 s after which an earlier launcher killed relays whose /version needed a token.
 */
const HOLD_MS = 62_000;

type Mode = "none" | "jwt" | "kube";
const MODES: Mode[] = ["none", "jwt", "kube"];

const bearer = (t: string | undefined): Record<string, string> => (t ? { authorization: `Bearer ${t}` } : {});

async function status(url: string, t?: string): Promise<number> {
  const response = await fetch(url, { headers: bearer(t) });
  await response.body?.cancel();
  return response.status;
}

/**
 * Read a watch until `until` (epoch ms): how many events arrived, and when the last did. Fails
 * if the stream ends before then.
 */
async function watchUntil(url: string, t: string | undefined, until: number): Promise<{ events: number; lastAt: number }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: bearer(t), signal: controller.signal });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let events = 0;
  let lastAt = 0;
  const end = setTimeout(() => controller.abort(), until - Date.now());
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the watch ended after ${events} events, before the hold was over`);
      events += decoder.decode(value, { stream: true }).split("\n").length - 1;
      lastAt = Date.now();
    }
  } catch (e) {
    if (!controller.signal.aborted) throw e;
  } finally {
    clearTimeout(end);
  }
  return { events, lastAt };
}

describe.concurrent("npm start in every AUTH_MODE", () => {
  const relays = {} as Record<Mode, RunningRelay>;
  const readyAt = {} as Record<Mode, number>;
  /** Each mode's credential for reading every pod. */
  const credentials = {} as Record<Mode, string | undefined>;

  beforeAll(async () => {
    const env: Record<Mode, Record<string, string>> = {
      none: {},
      jwt: { AUTH_MODE: "jwt", AUTH_JWT_SECRET: SECRET },
      kube: { AUTH_MODE: "kube" },
    };
    // All at the same moment: their ports must not collide.
    await Promise.all(
      MODES.map(async (mode) => {
        relays[mode] = await startRelay({ SIM_CHURN: "2", ...env[mode] });
        readyAt[mode] = Date.now();
      }),
    );
    credentials.none = undefined;
    credentials.jwt = await sign({ sub: "reader", exp: Math.floor(Date.now() / 1000) + 600, rules: [{ apiGroups: [""], resources: ["pods"], namespaces: ["*"] }] }, SECRET, "HS256");
    // The kube relay's cluster decides: a user whose token may read pods everywhere.
    const users = [{ name: "reader", tokens: ["reader-token"], rules: [{ verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"] }] }];
    const put = await fetch(`${simulatorUrl(relays.kube)}/_sim/users`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(users) });
    expect(put.status).toBe(200);
    credentials.kube = "reader-token";
  }, 180_000);
  afterAll(async () => {
    await Promise.all(Object.values(relays).map((r) => r.stop()));
  });

  it("launchers started at the same moment all serve, each from its own workerd", async () => {
    expect(new Set(MODES.map((m) => relays[m].pids.workerd)).size).toBe(3);
    for (const mode of MODES) expect(await status(`${relays[mode].url}/healthz`)).toBe(200);
  });

  for (const mode of MODES) {
    it(
      `${mode}: health endpoints need no token; an authorised watch outlasts every launcher timeout`,
      async () => {
        const { url } = relays[mode];
        expect(relays[mode].output()).not.toContain(SECRET);
        expect(await status(`${url}/healthz`)).toBe(200);
        expect(await status(`${url}/readyz`)).toBe(200);
        expect(await status(`${url}/api/v1/pods`)).toBe(mode === "none" ? 200 : 401);

        const until = readyAt[mode] + HOLD_MS;
        const watched = await watchUntil(`${url}/api/v1/pods?watch=1`, credentials[mode], until);
        // The initial pods, then churn to the end.
        expect(watched.events).toBeGreaterThan(32);
        expect(until - watched.lastAt).toBeLessThan(10_000);
        expect(running(relays[mode].pids.launcher)).toBe(true);
        expect(running(relays[mode].pids.workerd)).toBe(true);
        expect(await status(`${url}/api/v1/namespaces/team-a/pods`, credentials[mode])).toBe(200);
        expect(await status(`${url}/readyz`)).toBe(200);
      },
      HOLD_MS + 30_000,
    );
  }
});
