/**
 * @module
 * Requests the API server refuses are refused with a `Status` whose code is the HTTP status: a
 * selector it cannot parse or a field it cannot select by (400, on a list and before a watch
 * starts), a continue token it did not make (400), a resource or API group it does not serve
 * (404).
 */
import type { Status } from "../../src/k8s/types.ts";
import { configMaps, pathOf } from "../collection.ts";
import type { Check, Context } from "../context.ts";
import type { Query, Reply } from "../http.ts";
import { expect } from "../outcome.ts";
import { describe, queryText, statusOf } from "../reads.ts";

interface Case {
  what: string;
  path: string;
  query: Query;
  watch?: boolean;
  code: number;
  reason: string;
}

export const statusErrorsCheck: Check = {
  id: "status-errors",
  title: "bad selectors and continue tokens (400), unknown resources and groups (404): a Status each",
  async run(ctx) {
    const collection = ctx.writer ? configMaps(ctx.namespace) : ctx.observed;
    const path = pathOf(collection);
    const cases: Case[] = [
      { what: "a label selector that does not parse", path, query: { labelSelector: "conformance in (" }, code: 400, reason: "BadRequest" },
      { what: "a watch with a label selector that does not parse", path, query: { labelSelector: "conformance in (" }, watch: true, code: 400, reason: "BadRequest" },
      { what: "a field selector on a field that cannot be selected", path, query: { fieldSelector: "spec.conformance=x" }, code: 400, reason: "BadRequest" },
      { what: "a continue token the server did not make", path, query: { limit: 1, continue: "conformance-not-a-token" }, code: 400, reason: "BadRequest" },
      { what: "a resource the server does not serve", path: "/api/v1/conformancenothings", query: {}, code: 404, reason: "NotFound" },
      { what: "an API group the server does not serve", path: "/apis/conformance.example.com/v1/things", query: {}, code: 404, reason: "NotFound" },
    ];
    for (const c of cases) checkStatus(c, await answer(ctx, c));
    return `${cases.map((c) => c.code).join(", ")}, each a Status with its code and reason`;
  },
};

async function answer(ctx: Context, c: Case): Promise<Reply> {
  if (!c.watch) return ctx.api.get(c.path, c.query);
  const opened = await ctx.api.watch(c.path, c.query);
  if (opened.ok) {
    opened.stream.close();
    return { status: 200, headers: opened.headers, text: "(a watch stream)", json: undefined };
  }
  return opened.reply;
}

function checkStatus(c: Case, reply: Reply): void {
  const request = `${c.what} (${c.path}${queryText({ ...c.query, ...(c.watch ? { watch: 1 } : {}) })})`;
  expect(reply.status === c.code, () => `${request} answered ${describe(reply)}, not ${c.code}`);
  const status: Status | undefined = statusOf(reply);
  expect(status, () => `${request} answered ${reply.status} without a Status body: ${reply.text.slice(0, 80)}`);
  expect(status.apiVersion === "v1" && status.status === "Failure", `${request} answered a Status that is not {apiVersion: v1, status: Failure}`);
  expect(status.code === c.code && status.reason === c.reason, `${request} answered a Status with code ${status.code} and reason ${status.reason}, not ${c.code} ${c.reason}`);
}
