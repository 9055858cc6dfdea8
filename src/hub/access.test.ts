import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Access } from "../auth/access.ts";
import type { Review } from "../auth/kube.ts";
import type { Status } from "../k8s/types.ts";
import type { Grant } from "../auth/access.ts";
import { AccessGuard } from "./access.ts";
import { Subscriber, type Sink } from "./subscriber.ts";

const access: Access = { cluster: "c", verb: "watch", group: "", resource: "pods", namespace: "team-a" };
const sink = {} as Sink;
const subscriber = () => new Subscriber(sink, 0, { bookmarks: false, deadline: undefined });

function guard(answer: () => Review<boolean>) {
  const checks: string[] = [];
  const revoked: Array<[Subscriber, Status]> = [];
  const g = new AccessGuard(
    async (token) => {
      checks.push(token);
      return answer();
    },
    1000,
    (s, status) => revoked.push([s, status]),
    () => undefined,
  );
  return { g, checks, revoked };
}

const kube = (token: string): Grant => ({ subject: "alice", recheck: { token, access } });

describe("AccessGuard", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("ends a JWT stream when its token expires, not before", async () => {
    const { g, revoked } = guard(() => ({ ok: true, value: true }));
    const s = subscriber();
    g.add(s, { subject: "alice", expiresAt: Date.now() + 5000 });
    await vi.advanceTimersByTimeAsync(4999);
    expect(revoked).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(revoked.map(([who, status]) => [who, status.code])).toEqual([[s, 401]]);
  });

  it("asks the cluster once per token and access, however many streams share them; keeps those still allowed", async () => {
    const { g, checks, revoked } = guard(() => ({ ok: true, value: true }));
    for (let i = 0; i < 5; i++) g.add(subscriber(), kube("t1"));
    g.add(subscriber(), kube("t2"));
    await vi.advanceTimersByTimeAsync(1000);
    expect(checks.sort()).toEqual(["t1", "t2"]);
    expect(revoked).toEqual([]);
  });

  it("ends every stream whose access the cluster revoked (403), or whose token it no longer accepts (401)", async () => {
    let answer: Review<boolean> = { ok: true, value: false };
    const { g, revoked } = guard(() => answer);
    const [a, b] = [subscriber(), subscriber()];
    g.add(a, kube("t1"));
    g.add(b, kube("t1"));
    await vi.advanceTimersByTimeAsync(1000);
    expect(revoked.map(([, status]) => status.code)).toEqual([403, 403]);
    g.remove(a);
    g.remove(b);
    answer = { ok: false, unauthenticated: true, reason: "token rejected" };
    const c = subscriber();
    g.add(c, kube("t3"));
    await vi.advanceTimersByTimeAsync(1000);
    expect(revoked.at(-1)?.[1].code).toBe(401);
  });

  it("a check that cannot be made counts as a no only after two intervals without a yes (fail closed, not flaky)", async () => {
    let answer: Review<boolean> = { ok: false, unauthenticated: false, reason: "the cluster did not answer" };
    const { g, revoked } = guard(() => answer);
    const s = subscriber();
    g.add(s, kube("t1"));
    await vi.advanceTimersByTimeAsync(2000);
    expect(revoked).toEqual([]);
    answer = { ok: true, value: true };
    await vi.advanceTimersByTimeAsync(1000); // a yes resets the count
    answer = { ok: false, unauthenticated: false, reason: "the cluster did not answer" };
    await vi.advanceTimersByTimeAsync(2000);
    expect(revoked).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(revoked.map(([who, status]) => [who, status.code])).toEqual([[s, 503]]);
  });

  it("stops asking once no stream needs it", async () => {
    const { g, checks } = guard(() => ({ ok: true, value: true }));
    const s = subscriber();
    g.add(s, kube("t1"));
    g.remove(s);
    await vi.advanceTimersByTimeAsync(5000);
    expect(checks).toEqual([]);
  });
});
