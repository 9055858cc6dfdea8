/**
 * @module
 * The server under test (or the one writes go through), over HTTP(S) with Node's own client, so
 * a cluster's CA (`--ca`) or no verification at all (`--insecure-skip-tls-verify`) can be used
 * as kubectl would: requests with their whole answer, and watches read as they stream.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { LineSplitter } from "../src/k8s/ndjson.ts";
import { EventStream, itemOf, type StreamItem } from "./stream.ts";

export interface Endpoint {
  /** The server's URL; a path in it (a proxy's prefix) is kept in front of every request's. */
  url: URL;
  token: string | undefined;
  /** PEM of the CA to trust, beside the system's. */
  ca: string | undefined;
  insecure: boolean;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, when it is. */
  json: unknown;
}

export interface RequestOptions {
  query?: Query;
  accept?: string;
  body?: unknown;
  contentType?: string;
  /** How long the whole answer may take. */
  timeoutMs?: number;
}

export type Opened = { ok: true; stream: EventStream; status: number; headers: IncomingHttpHeaders } | { ok: false; reply: Reply };

const REQUEST_MS = 15_000;

export class Api {
  readonly endpoint: Endpoint;

  constructor(endpoint: Endpoint) {
    this.endpoint = endpoint;
  }

  /** `https://host:port` of the server. */
  get origin(): string {
    return this.endpoint.url.origin;
  }

  url(path: string, query: Query = {}): URL {
    const base = this.endpoint.url.pathname.replace(/\/+$/, "");
    const url = new URL(`${this.endpoint.url.origin}${base}${path}`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    return url;
  }

  /** Headers every request carries: the token, when there is one. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.endpoint.token === undefined ? extra : { authorization: `Bearer ${this.endpoint.token}`, ...extra };
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
    const headers = this.headers({ accept: options.accept ?? "application/json" });
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] = options.contentType ?? "application/json";
    }
    const url = this.url(path, options.query);
    const timeoutMs = options.timeoutMs ?? REQUEST_MS;
    const response = await this.#send(method, url, headers, body, timeoutMs);
    return await readReply(response, `${method} ${url.pathname}${url.search}`, timeoutMs);
  }

  get(path: string, query?: Query, accept?: string): Promise<Reply> {
    return this.request("GET", path, { ...(query ? { query } : {}), ...(accept ? { accept } : {}) });
  }

  /** A watch over HTTP: once its headers are in, the stream of its events; any other answer whole. */
  async watch(path: string, query: Query, accept?: string): Promise<Opened> {
    const url = this.url(path, { ...query, watch: 1 });
    const response = await this.#send("GET", url, this.headers({ accept: accept ?? "application/json" }), undefined, REQUEST_MS);
    if (response.statusCode !== 200) return { ok: false, reply: await readReply(response, `GET ${url.pathname}${url.search}`, REQUEST_MS) };
    return { ok: true, stream: new EventStream(lines(response), () => response.destroy()), status: 200, headers: response.headers };
  }

  #send(method: string, url: URL, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<IncomingMessage> {
    const { ca, insecure } = this.endpoint;
    const tls = url.protocol === "https:" ? { ...(ca ? { ca } : {}), rejectUnauthorized: !insecure } : {};
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = send(url, { method, headers, ...tls }, resolve);
      // Until the answer's headers arrive; a watch's body may then take as long as it runs.
      const timer = setTimeout(() => request.destroy(new Error(`${method} ${url.pathname}: no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      request.once("response", () => clearTimeout(timer));
      request.once("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`${method} ${url.origin}${url.pathname}: ${(e as Error).message}`));
      });
      request.end(body);
    });
  }
}

async function readReply(response: IncomingMessage, what: string, timeoutMs: number): Promise<Reply> {
  const timer = setTimeout(() => response.destroy(new Error(`${what}: the answer did not end within ${timeoutMs / 1000} s`)), timeoutMs);
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.statusCode ?? 0, headers: response.headers, text, json };
  } finally {
    clearTimeout(timer);
  }
}

/** A chunked watch body as items: one per line (blank lines, which the relay sends to quiet streams, skipped). */
async function* lines(response: IncomingMessage): AsyncGenerator<StreamItem> {
  const splitter = new LineSplitter();
  try {
    for await (const chunk of response) for (const line of splitter.push(chunk as Buffer)) yield itemOf(line);
  } catch (e) {
    yield { kind: "end", error: (e as Error).message };
    return;
  }
  if (splitter.pending > 0) yield { kind: "garbage", text: `the stream ended inside a line (${splitter.pending} characters)` };
  yield { kind: "end" };
}
