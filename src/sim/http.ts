/**
 * @module
 * HTTP plumbing shared by the Kubernetes routes and the control API: the headers every API
 * server response carries, JSON and `Status` responses (with `Retry-After` copied from
 * `details.retryAfterSeconds`, as `ErrorNegotiated` does), and bounded request bodies.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { failure, retryAfterHeader } from "../k8s/status.ts";
import type { KubeList, Status } from "../k8s/types.ts";
import { ApiError } from "./errors.ts";
import { goJson, goJsonBody } from "./json.ts";

/** Headers of every API server response (apiserver `filters/cachecontrol.go`, audit ID). */
export function apiHeaders(contentType = "application/json"): Record<string, string> {
  return { "Audit-Id": randomUUID(), "Cache-Control": "no-cache, private", "Content-Type": contentType };
}

export function sendJson(res: ServerResponse, code: number, body: unknown, options: { contentType?: string; pretty?: boolean } = {}): void {
  const text = goJsonBody(body, options.pretty);
  res.writeHead(code, { ...apiHeaders(options.contentType), "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

/**
 * A list longer than this is written item by item, as the API server streams a large list's
 * JSON: whole, 200,000 pods are more JSON than one string can hold.
 */
export const STREAMED_LIST_ITEMS = 10_000;

/** A list response: as one body, or a large one streamed (chunked, a few hundred KB a write, minding backpressure). */
export async function sendList(res: ServerResponse, list: KubeList, pretty: boolean): Promise<void> {
  if (pretty || list.items.length <= STREAMED_LIST_ITEMS) return sendJson(res, 200, list, { pretty });
  res.writeHead(200, apiHeaders());
  const { items, ...head } = list;
  // `{"kind":…,"metadata":{…},"items":[` (items come last, as the API server writes them).
  let chunk = goJson({ ...head, items: [] }).slice(0, -2);
  for (let i = 0; i < items.length; i++) {
    chunk += (i === 0 ? "" : ",") + goJson(items[i]);
    if (chunk.length < 256 * 1024) continue;
    if (res.destroyed) return;
    if (!res.write(chunk)) await drained(res);
    chunk = "";
  }
  res.end(`${chunk}]}\n`);
}

/** Resolves once `res` can take more, or is closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

export function sendStatus(res: ServerResponse, status: Status, pretty = false): void {
  const retryAfter = retryAfterHeader(status);
  if (retryAfter) res.setHeader("Retry-After", retryAfter);
  sendJson(res, status.code ?? 500, status, { pretty });
}

/** `?pretty=true`, or a curl/Wget User-Agent, gets indented JSON (apiserver `negotiation`). */
export function wantsPretty(req: IncomingMessage, query: URLSearchParams): boolean {
  const pretty = query.get("pretty");
  if (pretty !== null) return pretty === "true" || pretty === "1";
  return /^(curl|Wget)\//.test(req.headers["user-agent"] ?? "");
}

/** The API server's request body limit (3 MiB). */
const MAX_BODY = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBytes(req)).toString("utf8");
}

export async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new ApiError(failure(413, "RequestEntityTooLarge", `Request entity too large: limit is ${MAX_BODY}`));
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Parse a JSON body, or fail with 400 naming the parse error. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(failure(400, "BadRequest", `the request body is not valid JSON: ${(e as Error).message}`));
  }
}
