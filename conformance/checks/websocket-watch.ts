/**
 * @module
 * The WebSocket form of a watch (`Upgrade: websocket`), where the server offers it: one event
 * per text message, the same events as the HTTP form, and a close with 1000 when
 * `timeoutSeconds` ends it. A server that refuses the upgrade: not applicable.
 */
import { configMaps, pathOf } from "../collection.ts";
import type { Check, Context } from "../context.ts";
import type { Query } from "../http.ts";
import { expect, notApplicable } from "../outcome.ts";
import { changes, errorIn, eventsText, gather, list, nameOf } from "../reads.ts";
import type { EventStream } from "../stream.ts";
import { openWebSocketWatch } from "../websocket.ts";

export const websocketCheck: Check = {
  id: "websocket",
  title: "a watch over WebSocket: one event per text message, closed with 1000 at timeoutSeconds",
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    const query = objects ? { labelSelector: objects.selector } : {};
    const start = (await list(ctx.api, collection, query)).metadata.resourceVersion;
    let events = "";
    if (objects) {
      const stream = await open(ctx, pathOf(collection), { ...query, resourceVersion: start });
      const written = [await objects.create("x"), await objects.update("x")];
      const got = changes((await gather(stream, 15_000, (e) => e.type === "ERROR" || e.object.metadata?.resourceVersion === written[1]!.metadata?.resourceVersion)).events);
      const expected = [`ADDED ${nameOf(written[0]!)}@${written[0]!.metadata?.resourceVersion}`, `MODIFIED ${nameOf(written[1]!)}@${written[1]!.metadata?.resourceVersion}`];
      expect(
        JSON.stringify(got.map((e) => `${e.type} ${nameOf(e.object)}@${e.object.metadata?.resourceVersion}`)) === JSON.stringify(expected),
        () => `the WebSocket watch got ${eventsText(got)}, not ${expected.join(", ")}`,
      );
      events = "the changes written, one per text message; ";
    }
    const started = Date.now();
    const timed = await open(ctx, pathOf(collection), { ...query, resourceVersion: start, timeoutSeconds: 2 });
    const gathered = await gather(timed, 12_000);
    const error = errorIn(gathered.events);
    expect(!error, () => `the WebSocket watch failed: ERROR ${error?.code} ${error?.message}`);
    expect(gathered.stop === "end", "a WebSocket watch with timeoutSeconds=2 was still open 12 s later");
    expect(gathered.end?.code === 1000, `a WebSocket watch ended by timeoutSeconds=2 closed with ${gathered.end?.code} ${gathered.end?.reason ?? ""}, not 1000`);
    return `${events}closed with 1000 after ${((Date.now() - started) / 1000).toFixed(1)} s at timeoutSeconds=2`;
  },
};

async function open(ctx: Context, path: string, query: Query): Promise<EventStream> {
  const opened = await openWebSocketWatch(ctx.api, path, query);
  if (!opened.ok) {
    const answer = opened.status === 200 ? "200 and an HTTP watch" : `${opened.status}${opened.text ? ` ${opened.text.trim().slice(0, 100)}` : ""}`;
    notApplicable(`the server does not take the WebSocket upgrade (it answered ${answer})`);
  }
  ctx.defer(() => opened.stream.close());
  return opened.stream;
}
