/**
 * @module
 * What clients asked of the Kubernetes API: a bounded log (the last 10,000 requests, each
 * with a sequence number) and per-verb counts. Tests read it to assert which upstream requests
 * the relay made. Control requests (`/_sim/`) are never recorded.
 */
import type { ServerResponse } from "node:http";
import type { KubeVerb } from "../k8s/types.ts";

/** What a logged request did: a verb on a resource, or a discovery read. */
export type Verb = KubeVerb | "discovery";

export interface LoggedRequest {
  seq: number;
  method: string;
  verb: Verb;
  path: string;
  /** The query string as sent, without `?`. */
  query: string;
  /** HTTP status once the response head is written; 0 before that (or if the client left first). */
  status: number;
  /** Its response is still open: being written, or held (a watch, a follow). */
  open: boolean;
}

export interface RequestCounts {
  list: number;
  watch: number;
  get: number;
  write: number;
  discovery: number;
}

const LOG_LIMIT = 10_000;

interface Entry extends LoggedRequest {
  /** Held until the response closes, so a long-running watch reports its status while open. */
  res: ServerResponse | undefined;
}

export class RequestLog {
  #entries: Entry[] = [];
  #nextSeq = 1;
  #counts: RequestCounts = { list: 0, watch: 0, get: 0, write: 0, discovery: 0 };

  record(method: string, verb: Verb, path: string, query: string, res: ServerResponse): void {
    const entry: Entry = { seq: this.#nextSeq++, method, verb, path, query, status: 0, open: true, res };
    res.once("close", () => {
      entry.status = res.headersSent ? res.statusCode : 0;
      entry.open = false;
      entry.res = undefined;
    });
    this.#entries.push(entry);
    if (this.#entries.length > LOG_LIMIT * 1.1) this.#entries = this.#entries.slice(-LOG_LIMIT);
    if (verb === "create" || verb === "update" || verb === "patch" || verb === "delete") this.#counts.write++;
    else this.#counts[verb]++;
  }

  /** Requests with seq ≥ `since` whose path starts with `pathPrefix`; `next` is the seq to ask from next time. */
  page(since = 0, pathPrefix = ""): { next: number; requests: LoggedRequest[] } {
    const requests = this.#entries
      .slice(-LOG_LIMIT)
      .filter((e) => e.seq >= since && e.path.startsWith(pathPrefix))
      .map(({ res, ...e }) => ({ ...e, status: res?.headersSent ? res.statusCode : e.status }));
    return { next: this.#nextSeq, requests };
  }

  counts(): RequestCounts {
    return { ...this.#counts };
  }

  reset(): void {
    this.#entries = [];
    this.#nextSeq = 1;
    this.#counts = { list: 0, watch: 0, get: 0, write: 0, discovery: 0 };
  }
}
