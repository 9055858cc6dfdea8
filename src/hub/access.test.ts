import { describe, expect, it } from "vitest";
import type { Access } from "../auth/access.ts";
import type { Review } from "../auth/kube.ts";
import type { Status } from "../k8s/types.ts";
import type { Grant } from "../auth/access.ts";
import { AccessGuard } from "./access.ts";
import { FakeClock, settled } from "./clock.fake.ts";
import { Subscriber, type Sink } from "./subscriber.ts";

const access: Access = { cluster: "c", verb: "watch", group: "", resource: "pods", namespace: "team-a" };
const sink = {} as Sink;
const subscriber = () => new Subscriber(sink, 0, { bookmarks: false, timeoutMs: undefined });
const INTERVAL_MS = 1000;

function guard(answer: () => Review<boolean>) {
  const checks: string[] = [];
  const revoked: Array<[Subscriber, Status]> = [];
  const clock = new FakeClock();
  const g = new AccessGuard(
    async (token) => {
      checks.push(token);
      return answer();
    },
    INTERVAL_MS,
    (s, status) => revoked.push([s, status]),
    () => undefined,
    clock,
  );
  /** Let `n` intervals pass, each re-check answered and acted on before the next. */
  const intervals = async (n: number) => {
    for (let i = 0; i < n; i++) {
      clock.advance(INTERVAL_MS);
      await settled();
    }
  };
  return { g, checks, revoked, clock, intervals };
}

const kube = (token: string): Grant => ({ subject: "alice", recheck: { token, access } });

describe("AccessGuard", () => {
  it("ends a JWT stream when its token expires, not before", () => {
    const { g, revoked, clock } = guard(() => ({ ok: true, value: true }));
    const s = subscriber();
    g.add(s, { subject: "alice", expiresAt: clock.now() + 5000 });
    clock.advance(4999);
    expect(revoked).toEqual([]);
    clock.advance(1);
    expect(revoked.map(([who, status]) => [who, status.code])).toEqual([[s, 401]]);
  });

  it("asks the cluster once per token and access, however many streams share them; keeps those still allowed", async () => {
    const { g, checks, revoked, intervals } = guard(() => ({ ok: true, value: true }));
    for (let i = 0; i < 5; i++) g.add(subscriber(), kube("t1"));
    g.add(subscriber(), kube("t2"));
    await intervals(1);
    expect(checks.sort()).toEqual(["t1", "t2"]);
    expect(revoked).toEqual([]);
  });

  it("ends every stream whose access the cluster revoked (403), or whose token it no longer accepts (401)", async () => {
    let answer: Review<boolean> = { ok: true, value: false };
    const { g, revoked, intervals } = guard(() => answer);
    const [a, b] = [subscriber(), subscriber()];
    g.add(a, kube("t1"));
    g.add(b, kube("t1"));
    await intervals(1);
    expect(revoked.map(([, status]) => status.code)).toEqual([403, 403]);
    g.remove(a);
    g.remove(b);
    answer = { ok: false, unauthenticated: true, reason: "token rejected" };
    const c = subscriber();
    g.add(c, kube("t3"));
    await intervals(1);
    expect(revoked.at(-1)?.[1].code).toBe(401);
  });

  it("a check that cannot be made counts as a no only after two intervals without a yes (fail closed, not flaky)", async () => {
    let answer: Review<boolean> = { ok: false, unauthenticated: false, reason: "the cluster did not answer" };
    const { g, revoked, intervals } = guard(() => answer);
    const s = subscriber();
    g.add(s, kube("t1"));
    await intervals(2);
    expect(revoked).toEqual([]);
    answer = { ok: true, value: true };
    await intervals(1); // a yes resets the count
    answer = { ok: false, unauthenticated: false, reason: "the cluster did not answer" };
    await intervals(2);
    expect(revoked).toEqual([]);
    await intervals(1);
    expect(revoked.map(([who, status]) => [who, status.code])).toEqual([[s, 503]]);
  });

  it("stops asking once no stream needs it", async () => {
    const { g, checks, clock, intervals } = guard(() => ({ ok: true, value: true }));
    const s = subscriber();
    g.add(s, kube("t1"));
    g.remove(s);
    await intervals(5);
    expect(checks).toEqual([]);
    expect(clock.pending).toEqual([]);
  });
});
