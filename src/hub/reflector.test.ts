import { describe, expect, it } from "vitest";
import { watchKey } from "../k8s/key.ts";
import type { WatchEvent } from "../k8s/types.ts";
import { eventually } from "../../test/kit/wait.ts";
import { Reflector, type ReflectorHandler, type ReflectorState, type UpstreamObserver } from "./reflector.ts";

const key = watchKey({ cluster: "default", group: "", version: "v1", resource: "pods", namespace: "ns", namespaced: true, labelSelector: null, fieldSelector: null });
const pod = (rv: number) => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "a", namespace: "ns", uid: "u-a", resourceVersion: String(rv) } });
const encoder = new TextEncoder();

/**
 * An upstream whose lists answer at resourceVersion 10 and whose watch streams the test writes
 * to: `watches` holds each watch request's resourceVersion and its stream's controller.
 */
function upstream(answer: (query: URLSearchParams) => Response | undefined = () => undefined) {
  const watches: Array<{ from: string; stream: ReadableStreamDefaultController<Uint8Array> }> = [];
  return {
    watches,
    cluster: "default",
    async fetch(pathAndQuery: string, init?: RequestInit): Promise<Response> {
      const query = new URL(pathAndQuery, "http://upstream").searchParams;
      const injected = answer(query);
      if (injected) return injected;
      if (query.get("watch") !== "1") return Response.json({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "10" }, items: [pod(10)] });
      let stream!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({ start: (c) => void (stream = c) });
      init?.signal?.addEventListener("abort", () => stream.error(init.signal?.reason));
      watches.push({ from: query.get("resourceVersion") ?? "", stream });
      return new Response(body);
    },
  };
}

/** A handler that keeps the resume point as the hub does, and records what it is told. */
function handler() {
  let head: number | undefined;
  const states: ReflectorState[] = [];
  const events: WatchEvent[] = [];
  const h: ReflectorHandler = {
    resumeVersion: () => head,
    listed: (list) => void (head = list.resourceVersion),
    events: (batch) => {
      events.push(...batch);
      head = Number(batch.at(-1)!.object.metadata?.resourceVersion);
    },
    state: (state) => void states.push(state),
    checking: () => undefined,
    upToDate: () => undefined,
  };
  return { h, states, events };
}

/** Counts of what the reflector reports to its observer. */
function observer() {
  const seen: string[] = [];
  const o: UpstreamObserver = {
    watch: (reconnect) => void seen.push(reconnect ? "rewatch" : "watch"),
    relisted: () => void seen.push("relisted"),
    expired: () => void seen.push("expired"),
    stalled: () => void seen.push("stalled"),
    renewed: () => void seen.push("renewed"),
    failed: (status) => void seen.push(`failed ${status}`),
  };
  return { o, seen };
}

function reflector(up: ReturnType<typeof upstream>, h: ReflectorHandler, o: UpstreamObserver, stallMs = 60_000) {
  return new Reflector(key, up, h, { stallMs, watchTimeoutSeconds: () => 300, random: () => 0.5, observer: o });
}

describe("Reflector.renew", () => {
  it("ends a stream older than the bound and re-watches at once from the last resourceVersion: no backoff, no relist", async () => {
    const up = upstream();
    const { h, states, events } = handler();
    const { o, seen } = observer();
    const r = reflector(up, h, o);
    r.start();
    await eventually(() => up.watches.length === 1, "the first watch");
    up.watches[0]!.stream.enqueue(encoder.encode(`${JSON.stringify({ type: "MODIFIED", object: pod(11) })}\n`));
    await eventually(() => events.length === 1, "the event");

    r.renew(60_000); // a fresh stream: left alone
    r.renew(0);
    await eventually(() => up.watches.length === 2, "the re-watch");
    expect(up.watches.map((w) => w.from)).toEqual(["10", "11"]);
    expect(states).not.toContain("backoff");
    expect(seen).toEqual(["watch", "renewed", "rewatch"]);
    r.stop();
  });
});

describe("what the reflector reports of the upstream", () => {
  it("a 410 on a re-watch: expired, then a relist", async () => {
    let expire = false;
    const up = upstream((q) => (expire && q.get("watch") === "1" ? ((expire = false), Response.json({ kind: "Status", code: 410 }, { status: 410 })) : undefined));
    const { h } = handler();
    const { o, seen } = observer();
    const r = reflector(up, h, o);
    r.start();
    await eventually(() => up.watches.length === 1, "the first watch");
    expire = true;
    // A stream that delivered something and ended: re-watched at once, and the re-watch is 410.
    up.watches[0]!.stream.enqueue(encoder.encode(`${JSON.stringify({ type: "MODIFIED", object: pod(11) })}\n`));
    up.watches[0]!.stream.close();
    await eventually(() => up.watches.length === 2, "the watch after the relist");
    expect(seen).toEqual(["watch", "rewatch", "expired", "relisted", "rewatch"]);
    r.stop();
  });

  it("a stall is counted as a stall, an error status by its code", async () => {
    let fail = false;
    const up = upstream((q) => (fail && q.get("watch") === "1" ? ((fail = false), new Response("boom", { status: 500 })) : undefined));
    const { h } = handler();
    const { o, seen } = observer();
    const r = reflector(up, h, o, 50);
    r.start();
    await eventually(() => up.watches.length === 1, "the first watch");
    fail = true;
    await eventually(() => up.watches.length === 2, "the watch after the stall and the 500");
    expect(seen).toEqual(["watch", "stalled", "rewatch", "failed 500", "rewatch"]);
    r.stop();
  });
});
