import { describe, expect, it } from "vitest";
import { watchKey } from "../k8s/key.ts";
import { INITIAL_EVENTS_END } from "../k8s/types.ts";
import { FakeClock, settled } from "./clock.fake.ts";
import { PROBE_LABEL, PROBE_TIMEOUT_SECONDS, probePath, probeUpstream } from "./probe.ts";
import { UpstreamError } from "./upstream-error.ts";

const key = watchKey({ cluster: "c", group: "apps", version: "v1", resource: "deployments", namespace: "ns", namespaced: true, labelSelector: "app=web", fieldSelector: "metadata.name=x" });

const line = (event: unknown) => `${JSON.stringify(event)}\n`;
const bookmark = (rv: number, end: boolean) => ({
  type: "BOOKMARK",
  object: { kind: "Deployment", apiVersion: "apps/v1", metadata: { resourceVersion: String(rv), ...(end ? { annotations: { [INITIAL_EVENTS_END]: "true" } } : {}) } },
});
const status = (code: number, message: string, tooLarge = false) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  message,
  code,
  ...(tooLarge ? { reason: "Timeout", details: { causes: [{ reason: "ResourceVersionTooLarge" }] } } : {}),
});

/** An upstream whose answer to the probe is `body` (written at once; the stream is left open unless `end`), or the refusal `refused`. */
function upstream(answer: { body?: string; end?: boolean; refused?: { status: number; json: unknown } }) {
  const asked: string[] = [];
  let aborted = false;
  const request = async (url: string, signal: AbortSignal): Promise<Response> => {
    asked.push(url);
    signal.addEventListener("abort", () => (aborted = true));
    if (answer.refused) throw new UpstreamError(answer.refused.status, `upstream ${answer.refused.status} for ${url}: ${JSON.stringify(answer.refused.json)}`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (answer.body) controller.enqueue(new TextEncoder().encode(answer.body));
        if (answer.end) controller.close();
        signal.addEventListener("abort", () => controller.error(signal.reason));
      },
    });
    return new Response(body);
  };
  return { request, asked, aborted: () => aborted };
}

describe("probeUpstream", () => {
  it("asks for a watch-list of the key's collection, its namespace and not its selectors, that no object can match", () => {
    const query = new URL(probePath(key), "http://x").searchParams;
    expect(probePath(key).split("?")[0]).toBe("/apis/apps/v1/namespaces/ns/deployments");
    expect(Object.fromEntries(query)).toEqual({
      watch: "1",
      sendInitialEvents: "true",
      resourceVersionMatch: "NotOlderThan",
      allowWatchBookmarks: "true",
      labelSelector: `!${PROBE_LABEL},${PROBE_LABEL}`,
      timeoutSeconds: String(PROBE_TIMEOUT_SECONDS),
    });
  });

  it("the initial-events-end bookmark: how far the upstream's cache had got; the request is ended at once", async () => {
    const up = upstream({ body: line(bookmark(42, true)) });
    expect(await probeUpstream(key, up.request, new FakeClock())).toEqual({ reached: 42 });
    expect(up.asked).toEqual([probePath(key)]);
    expect(up.aborted()).toBe(true);
  });

  it("an upstream that serves no watch-lists says so: refused (422, 400), an ERROR (etcd without progress notifications), another first line, the stream ended at its timeout", async () => {
    const clock = new FakeClock();
    const answers = [
      { refused: { status: 422, json: status(422, "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled") } },
      { refused: { status: 400, json: status(400, "unknown parameter") } },
      { body: line({ type: "ERROR", object: status(500, "etcd does not support RequestWatchProgress") }) },
      { body: line(bookmark(42, false)) },
    ];
    for (const answer of answers) expect(await probeUpstream(key, upstream(answer).request, clock)).toEqual({ unsupported: expect.any(String) });

    const ended = upstream({ end: true });
    const probing = probeUpstream(key, ended.request, clock);
    clock.advance(PROBE_TIMEOUT_SECONDS * 1000);
    expect(await probing).toEqual({ unsupported: expect.stringContaining("at its timeout") });
  });

  it("a failure a later probe may not meet is thrown: a cache more than 3 s behind, 429, 5xx, a stream cut before its bookmark, one that says nothing", async () => {
    const clock = new FakeClock();
    await expect(
      probeUpstream(key, upstream({ body: line({ type: "ERROR", object: status(504, "Timeout: Too large resource version: 12, current: 10", true) }) }).request, clock),
    ).rejects.toMatchObject({ status: 504 });
    await expect(probeUpstream(key, upstream({ body: line({ type: "ERROR", object: status(429, "too many requests") }) }).request, clock)).rejects.toMatchObject({ status: 429 });
    await expect(probeUpstream(key, upstream({ refused: { status: 503, json: status(503, "unavailable") } }).request, clock)).rejects.toMatchObject({ status: 503 });
    await expect(probeUpstream(key, upstream({ end: true }).request, clock)).rejects.toMatchObject({ status: 0 });

    const silent = upstream({});
    let outcome: unknown;
    probeUpstream(key, silent.request, clock).then(
      (answer) => (outcome = answer),
      (e: unknown) => (outcome = e),
    );
    await settled();
    clock.advance((PROBE_TIMEOUT_SECONDS + 5) * 1000);
    await settled();
    expect(outcome).toBeInstanceOf(UpstreamError);
    expect(outcome).toMatchObject({ status: 504 });
    expect(silent.aborted()).toBe(true);
  });
});
