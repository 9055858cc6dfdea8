/**
 * `npm start` in every AUTH_MODE, three launchers started at the same moment: each becomes
 * ready, answers its health endpoints without a token, and keeps serving an authorised watch
 * for longer than any timeout inside the launcher; and `npm run token` makes tokens the jwt
 * relay accepts for what they grant, and only that.
 */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pumpLines } from "../kit/lines.ts";
import { simulatorUrl } from "./kube.ts";
import { running, startRelay, type RunningRelay } from "./harness.ts";

const SECRET = "start-modes-secret-long-enough-for-hs256";
const SCRAPER = "start-modes-scraper-token";
/**
 * How long each relay must keep serving after it said it was ready: past every deadline the
 * launcher sets itself (45 s from the runtime's start, which is before "ready"), and past the
 * 60 s after which an earlier launcher killed relays whose /version needed a token.
 */
const HOLD_MS = 62_000;

type Mode = "none" | "jwt" | "kube";
const MODES: Mode[] = ["none", "jwt", "kube"];

/** `npm run -s token -- ...args` with `env`: its exit code, stdout and stderr. */
function token(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("npm", ["run", "-s", "token", "--", ...args], { env: { ...process.env, ...env } }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
  });
}

async function mint(args: string[]): Promise<string> {
  const result = await token(args, { AUTH_JWT_SECRET: SECRET });
  if (result.code !== 0) throw new Error(`npm run token ${args.join(" ")}: ${result.code}: ${result.stderr}`);
  return result.stdout.trim();
}

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
  let events = 0;
  let lastAt = 0;
  const body = pumpLines(
    response.body!,
    () => {
      events++;
      lastAt = Date.now();
    },
    () => controller.abort(),
  );
  const hold = setTimeout(body.stop, until - Date.now());
  const end = await body.ended;
  clearTimeout(hold);
  if (!controller.signal.aborted) throw new Error(`the watch ended after ${events} events, before the hold was over${end.error ? `: ${String(end.error)}` : ""}`);
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
      jwt: { AUTH_MODE: "jwt", AUTH_JWT_SECRET: SECRET, METRICS_TOKEN: SCRAPER },
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
    credentials.jwt = await mint(["--sub", "reader", "--resource", "pods"]);
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

  it("passes the Worker its secrets from the environment, METRICS_TOKEN among them", async () => {
    const { url } = relays.jwt;
    expect(await status(`${url}/metrics`)).toBe(401);
    expect(await status(`${url}/metrics`, SCRAPER)).toBe(200);
    expect(relays.jwt.output()).not.toContain(SCRAPER);
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
        // A new key's first list; its Status message, should it fail, says why.
        const list = await fetch(`${url}/api/v1/namespaces/team-a/pods`, { headers: bearer(credentials[mode]) });
        expect(list.status, await list.text()).toBe(200);
        expect(await status(`${url}/readyz`)).toBe(200);
      },
      HOLD_MS + 30_000,
    );
  }

  it("npm run token: the jwt relay accepts a token for what it grants, and refuses the rest", async () => {
    const { url } = relays.jwt;
    const alice = await mint(["--sub", "alice", "--namespace", "team-a", "--resource", "pods", "--ttl", "10m"]);
    expect(await status(`${url}/api/v1/namespaces/team-a/pods`, alice)).toBe(200);
    expect(await status(`${url}/api/v1/namespaces/team-a/pods?watch=1&timeoutSeconds=1`, alice)).toBe(200);
    expect(await status(`${url}/api/v1/namespaces/team-b/pods`, alice)).toBe(403);
    expect(await status(`${url}/api/v1/pods`, alice)).toBe(403);
    expect(await status(`${url}/apis/apps/v1/namespaces/team-a/deployments`, alice)).toBe(403);

    const deployer = await mint(["--sub", "deployer", "--group", "apps", "--resource", "deployments", "--namespace", "team-a,team-b"]);
    expect(await status(`${url}/apis/apps/v1/namespaces/team-b/deployments`, deployer)).toBe(200);
    expect(await status(`${url}/api/v1/namespaces/team-b/pods`, deployer)).toBe(403);

    const elsewhere = await mint(["--sub", "visitor", "--cluster", "other"]);
    expect(await status(`${url}/api/v1/namespaces/team-a/pods`, elsewhere)).toBe(403);

    const forged = await token(["--sub", "mallory"], { AUTH_JWT_SECRET: "some-other-secret-entirely" });
    expect(await status(`${url}/api/v1/namespaces/team-a/pods`, forged.stdout.trim())).toBe(401);
  });

  it("npm run token: a clear error without AUTH_JWT_SECRET, or with a bad flag", async () => {
    const missing = await token(["--sub", "alice"], { AUTH_JWT_SECRET: undefined });
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toContain("AUTH_JWT_SECRET is not set");
    const bad = await token(["--ttl", "soon"], { AUTH_JWT_SECRET: SECRET });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--ttl "soon" is not a duration');
  });
});
