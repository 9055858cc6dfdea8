/**
 * @module
 * A load-generator process: subscribers that behave as real clients, each event timed from its
 * write (`written-at`) to receipt, read out of the bytes (never parsing JSON) to stay off the limit.
 */
import { get, type ClientRequest } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { gunzipSync } from "node:zlib";
import WebSocket from "ws";
import { framingOf } from "../src/k8s/websocket.ts";
import { methodsOf, serveParent } from "./children.ts";
import { ByteLines, eventVersion, isAdded, isErrorEvent, isModified, socketLine, writtenAt } from "./lines.ts";
import { Histogram, type HistogramEntries } from "./stats.ts";

export interface SubscriberSpec {
  url: string;
  ack: boolean;
  protocol?: string;
  compact?: boolean;
  /** Resume from its resourceVersion, or relist from the API server (`listUrl`). */
  resume: "rv" | "relist";
  listUrl: string;
  /** A relay socket (`url` is `/_relay/socket`): the watches to open on it, by message; watch `i` has id `"i"`. */
  watches?: Array<{ path: string; labelSelector?: string }>;
  from?: number;
}

export interface WindowReport {
  events: number;
  /** MODIFIED events among them, and their bytes (a delta's, when it came as one). */
  modified: number;
  modifiedBytes: number;
  messages: number;
  /** The events' bytes (decompressed), and what carried them on the wire. */
  bytes: number;
  wireBytes: number;
  latency: HistogramEntries;
  elapsedMs: number;
  /** Subscribers the system cut off (WebSocket 4008, or an HTTP watch it ended) during the window. */
  cutOffs: number;
  errors: number;
  /** Epoch ms: the earliest write stamp among the events received, and the last receipt. */
  firstWrittenAt: number | null;
  lastReceivedAt: number | null;
}

export interface CatchUp {
  /** Epoch ms at which each subscriber that caught up got there. */
  caughtUpAt: number[];
  /** Received from reconnecting until each caught up. */
  bytes: number;
  missing: number;
  errors: number;
}

/** 1/16 of the relay's default 4 MiB budget: its view of a client's backlog is never far off. */
const ACK_EVERY = 256 * 1024;
const RECONNECT_MS = 100;
const CONNECT_TIMEOUT_MS = 30_000;
/** A hub waiting its turn for `LIST_PAGES_AT_ONCE` answers 503: clients ask again, as many times. */
const STILL_LISTING_RETRIES = 300;
const STILL_LISTING_WAIT_MS = 1000;

class Subscriber {
  readonly spec: SubscriberSpec;
  rv = 0;
  received = 0;
  acked = 0;
  /** The last stream ended with 410 Expired: resume without a resourceVersion. */
  expired = false;
  leaving = false;
  /** Bumped by every close we ask for, so a reconnect scheduled before it is dropped. */
  epoch = 0;
  socket: WebSocket | undefined;
  request: ClientRequest | undefined;
  /** On a relay socket: each watch's last resourceVersion, and whether its last end was a 410. */
  watchRvs: number[] = [];
  watchExpired: boolean[] = [];
  /** On a relay socket's first open: the watches not yet heard from (each says something once open). */
  unheard: Set<number> | undefined;
  onHeard: ((error?: Error) => void) | undefined;
  caughtUpAt: number | undefined;
  catchUpBytes = 0;
  /** ADDED events received since `arrive` opened it. */
  added = 0;
  onClosed: (() => void) | undefined;

  constructor(spec: SubscriberSpec) {
    this.spec = spec;
    this.rv = spec.from ?? 0;
  }

  get open(): boolean {
    return this.socket !== undefined || this.request !== undefined;
  }
}

class LoadGenerator {
  #subscribers: Subscriber[] = [];
  #measuring = false;
  #window = LoadGenerator.#emptyWindow();
  /** Catching up to this resourceVersion, or to this many ADDED events (a whole initial state). */
  #target: number | undefined;
  #addedTarget: number | undefined;
  #onCaughtUp: (() => void) | undefined;
  #behind = 0;

  async open({ subscribers, concurrency }: { subscribers: SubscriberSpec[]; concurrency: number }): Promise<{ opened: number; failed: number; error?: string }> {
    const added = subscribers.map((s) => new Subscriber(s));
    this.#subscribers.push(...added);
    let failed = 0;
    let error: string | undefined;
    await eachLimited(added, concurrency, async (sub) => {
      try {
        await this.#connectWhenListed(sub);
      } catch (e) {
        failed++;
        error ??= (e as Error).message;
      }
    });
    return { opened: added.length - failed, failed, ...(error ? { error } : {}) };
  }

  static #emptyWindow() {
    const counts = { events: 0, modified: 0, modifiedBytes: 0, messages: 0, bytes: 0, wireBytes: 0, cutOffs: 0, errors: 0 };
    return { ...counts, started: performance.now(), latency: new Histogram(), firstWrittenAt: Infinity, lastReceivedAt: 0 };
  }

  measure(): void {
    this.#window = LoadGenerator.#emptyWindow();
    this.#measuring = true;
  }

  report(): WindowReport {
    this.#measuring = false;
    const { started, latency, firstWrittenAt, lastReceivedAt, ...counts } = this.#window;
    const any = counts.events > 0;
    return { ...counts, latency: latency.entries(), elapsedMs: performance.now() - started, firstWrittenAt: any ? firstWrittenAt : null, lastReceivedAt: any ? lastReceivedAt : null };
  }

  waitFor({ target, timeoutMs }: { target: number; timeoutMs: number }): Promise<CatchUp> {
    for (const sub of this.#subscribers) sub.caughtUpAt = sub.rv >= target ? Date.now() : undefined;
    return this.#catchUp(this.#subscribers, { rv: target }, timeoutMs, () => Promise.resolve());
  }

  arrive({ subscribers, concurrency, target, added, timeoutMs }: { subscribers: SubscriberSpec[]; concurrency: number; target?: number; added?: number; timeoutMs: number }): Promise<CatchUp> {
    const arriving = subscribers.map((s) => new Subscriber(s));
    this.#subscribers.push(...arriving);
    let errors = 0;
    return this.#catchUp(arriving, { rv: target, added }, timeoutMs, () =>
      eachLimited(arriving, concurrency, async (sub) => {
        try {
          await this.#connectWhenListed(sub);
        } catch {
          errors++;
          if (this.#addedTarget !== undefined || this.#target !== undefined) this.#oneDone();
        }
      }),
    ).then((result) => ({ ...result, errors }));
  }

  /** Close every subscriber, remembering where each was. */
  async drop(): Promise<void> {
    await Promise.all(this.#subscribers.map((sub) => this.#close(sub)));
    for (const sub of this.#subscribers) sub.leaving = false;
  }

  resume({ target, timeoutMs, concurrency }: { target: number; timeoutMs: number; concurrency: number }): Promise<CatchUp> {
    for (const sub of this.#subscribers) {
      sub.caughtUpAt = undefined;
      sub.catchUpBytes = 0;
    }
    let errors = 0;
    return this.#catchUp(this.#subscribers, { rv: target }, timeoutMs, () =>
      eachLimited(this.#subscribers, concurrency, async (sub) => {
        for (let attempt = 0; attempt < 5; attempt++) {
          try {
            if (sub.spec.resume === "relist") {
              this.#reached(sub, await listVersion(sub.spec.listUrl));
              await this.#connect(sub, undefined);
            } else {
              await this.#connect(sub, sub.rv);
            }
            return;
          } catch {
            errors++;
            await sleep(RECONNECT_MS);
          }
        }
      }),
    ).then((result) => ({ ...result, errors: result.errors + errors }));
  }

  async close(): Promise<void> {
    await Promise.all(this.#subscribers.map((sub) => this.#close(sub)));
    this.#subscribers = [];
  }

  /** Connect, asking again while the relay answers 503 (still listing), as clients do. */
  #connectWhenListed(sub: Subscriber, attempt = 1): Promise<void> {
    return this.#connect(sub, sub.spec.from).catch(async (e: Error) => {
      if (!/\b503\b/.test(e.message) || attempt >= STILL_LISTING_RETRIES || sub.leaving) throw e;
      await sleep(STILL_LISTING_WAIT_MS);
      return this.#connectWhenListed(sub, attempt + 1);
    });
  }

  async #catchUp(subscribers: readonly Subscriber[], until: { rv?: number; added?: number }, timeoutMs: number, start: () => Promise<void>): Promise<CatchUp> {
    this.#target = until.rv;
    this.#addedTarget = until.added;
    this.#behind = subscribers.filter((s) => s.caughtUpAt === undefined).length;
    const done = new Promise<void>((resolve) => {
      this.#onCaughtUp = resolve;
      if (this.#behind === 0) resolve();
    });
    // Connection attempts still under way at the timeout are left to finish or fail on their own.
    void start();
    await Promise.race([done, sleep(timeoutMs)]);
    this.#target = undefined;
    this.#addedTarget = undefined;
    const caughtUpAt = subscribers.flatMap((s) => (s.caughtUpAt === undefined ? [] : [s.caughtUpAt]));
    const bytes = subscribers.reduce((n, s) => n + s.catchUpBytes, 0);
    return { caughtUpAt, bytes, missing: subscribers.length - caughtUpAt.length, errors: 0 };
  }

  #reached(sub: Subscriber, rv: number): void {
    if (rv > sub.rv) sub.rv = rv;
    if (this.#target !== undefined && sub.caughtUpAt === undefined && sub.rv >= this.#target) this.#caughtUp(sub);
  }

  #caughtUp(sub: Subscriber): void {
    sub.caughtUpAt = Date.now();
    this.#oneDone();
  }

  #oneDone(): void {
    if (--this.#behind === 0) this.#onCaughtUp?.();
  }

  #event(sub: Subscriber, line: Buffer): void {
    const tagged = sub.spec.watches ? socketLine(line) : undefined;
    if (tagged && sub.unheard?.delete(tagged.id) && sub.unheard.size === 0) {
      sub.unheard = undefined;
      sub.onHeard?.();
    }
    if (tagged?.closed) return this.#watchClosed(sub, tagged.id, tagged.slow);
    if (isErrorEvent(line)) {
      if (tagged) sub.watchExpired[tagged.id] = true;
      else sub.expired = true;
      return;
    }
    const rv = eventVersion(line);
    if (tagged && rv > (sub.watchRvs[tagged.id] ?? 0)) sub.watchRvs[tagged.id] = rv;
    this.#reached(sub, rv);
    if (this.#addedTarget !== undefined && sub.caughtUpAt === undefined && isAdded(line) && ++sub.added >= this.#addedTarget) this.#caughtUp(sub);
    if (this.#measuring) {
      const w = this.#window;
      w.events++;
      w.bytes += line.length;
      if (isModified(line)) {
        w.modified++;
        w.modifiedBytes += line.length;
      }
      const now = Date.now();
      w.lastReceivedAt = now;
      const at = writtenAt(line);
      if (at > 0) {
        w.latency.add(now - at);
        if (at < w.firstWrittenAt) w.firstWrittenAt = at;
      }
    }
  }

  #url(sub: Subscriber, rv: number | undefined): string {
    // A relay socket's watches resume by message, each from its own resourceVersion.
    if (rv === undefined || rv <= 0 || sub.expired || sub.spec.watches) return sub.spec.url;
    return `${sub.spec.url}&resourceVersion=${rv}${sub.spec.compact ? "&compact=true" : ""}`;
  }

  #connect(sub: Subscriber, rv: number | undefined): Promise<void> {
    const url = this.#url(sub, rv);
    sub.expired = false;
    return url.startsWith("ws") ? this.#connectWebSocket(sub, url, rv !== undefined) : this.#connectHttp(sub, url);
  }

  /** Open watch `id` on a client's relay socket: from its last resourceVersion, unless it expired. */
  #watch(sub: Subscriber, id: number, resume: boolean): void {
    const watch = sub.spec.watches?.[id];
    if (!watch || !sub.socket) return;
    const rv = sub.watchRvs[id] ?? 0;
    const from = resume && rv > 0 && !sub.watchExpired[id] ? { resourceVersion: String(rv) } : {};
    sub.watchExpired[id] = false;
    sub.socket.send(JSON.stringify({ op: "watch", id: String(id), ...watch, ...from }));
  }

  /** The relay ended one watch of a client's socket: counted as a close, then resumed. */
  #watchClosed(sub: Subscriber, id: number, slow: boolean): void {
    if (this.#measuring) this.#window[slow ? "cutOffs" : "errors"]++;
    const epoch = sub.epoch;
    void sleep(RECONNECT_MS).then(() => {
      if (!sub.leaving && sub.epoch === epoch) this.#watch(sub, id, true);
    });
  }

  #connectWebSocket(sub: Subscriber, url: string, resume: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      // No compression and no UTF-8 validation: the instrument should cost as little as it can.
      const socket = new WebSocket(url, sub.spec.protocol ? [sub.spec.protocol] : [], {
        perMessageDeflate: false,
        skipUTF8Validation: true,
        maxPayload: 1 << 30,
        handshakeTimeout: CONNECT_TIMEOUT_MS,
      });
      // Messages of a framing that does not batch are read whole: a scan for line ends would cost.
      const framing = framingOf(sub.spec.protocol);
      const lines = framing.batched ? new ByteLines() : undefined;
      let opened = false;
      socket.on("open", () => {
        if (sub.leaving) return void socket.terminate();
        opened = true;
        sub.socket = socket;
        sub.received = sub.acked = 0;
        if (sub.spec.watches && !resume) {
          const unheard = (sub.unheard = new Set(sub.spec.watches.keys()));
          const timer = setTimeout(() => reject(new Error(`${unheard.size} of its watches said nothing within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
          sub.onHeard = (error) => {
            clearTimeout(timer);
            sub.onHeard = undefined;
            if (error) reject(error);
            else resolve();
          };
        }
        sub.spec.watches?.forEach((_, id) => this.#watch(sub, id, resume));
        if (!sub.unheard) resolve();
      });
      socket.on("message", (wire: Buffer, binary: boolean) => {
        if (this.#measuring) {
          this.#window.messages++;
          this.#window.wireBytes += wire.length;
        }
        if (sub.caughtUpAt === undefined) sub.catchUpBytes += wire.length;
        // A compressed framing's binary message is one gzip member of the batch's text.
        const data = framing.compressed && binary ? gunzipSync(wire) : wire;
        if (lines) lines.push(data, (line) => this.#event(sub, line));
        else this.#event(sub, data);
        if (!sub.spec.ack) return;
        // The relay counts UTF-16 units of the (decompressed) text; event JSON is ASCII.
        sub.received += data.length;
        if (sub.received - sub.acked >= ACK_EVERY) {
          sub.acked = sub.received;
          socket.send(`{"type":"ACK","received":${sub.received}}`);
        }
      });
      socket.on("error", (e) => {
        if (!opened) reject(e);
      });
      socket.on("close", (code) => {
        if (!opened) return reject(new Error(`closed before opening (${code})`));
        if (sub.unheard) sub.onHeard?.(new Error(`closed (${code}) before ${sub.unheard.size} of its watches said anything`));
        sub.unheard = undefined;
        sub.socket = undefined;
        this.#closed(sub, code === 4008);
      });
    });
  }

  #connectHttp(sub: Subscriber, url: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const request = get(url, { agent: false }, (response) => {
        if (sub.leaving) return void request.destroy();
        if (response.statusCode !== 200) {
          response.resume();
          return reject(new Error(`HTTP ${response.statusCode} for ${url}`));
        }
        // Only the connection attempt is timed: a live watch may be quiet for any length of time.
        request.setTimeout(0);
        sub.request = request;
        resolve();
        const lines = new ByteLines();
        response.on("data", (chunk: Buffer) => {
          if (this.#measuring) this.#window.wireBytes += chunk.length;
          if (sub.caughtUpAt === undefined) sub.catchUpBytes += chunk.length;
          lines.push(chunk, (line) => this.#event(sub, line));
        });
        response.on("close", () => {
          sub.request = undefined;
          // An API server ends a watch it considers too slow (or after timeoutSeconds).
          this.#closed(sub, !sub.leaving);
        });
      });
      request.setTimeout(CONNECT_TIMEOUT_MS, () => request.destroy(new Error(`no answer from ${url} within ${CONNECT_TIMEOUT_MS} ms`)));
      request.on("error", (e) => {
        if (!sub.request) reject(e);
      });
    });
  }

  #closed(sub: Subscriber, cutOff: boolean): void {
    if (sub.leaving) {
      sub.onClosed?.();
      return;
    }
    if (this.#measuring) this.#window[cutOff ? "cutOffs" : "errors"]++;
    const epoch = sub.epoch;
    void sleep(RECONNECT_MS).then(async () => {
      if (sub.leaving || sub.open || sub.epoch !== epoch) return;
      try {
        await this.#connect(sub, sub.spec.resume === "rv" ? sub.rv : undefined);
      } catch {
        if (this.#measuring) this.#window.errors++;
        this.#closed(sub, false);
      }
    });
  }

  #close(sub: Subscriber): Promise<void> {
    sub.leaving = true;
    sub.epoch++;
    if (!sub.open) return Promise.resolve();
    const closed = new Promise<void>((resolve) => (sub.onClosed = resolve));
    if (sub.socket) sub.socket.terminate();
    else sub.request?.destroy();
    return closed;
  }
}

function listVersion(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (c: Buffer) => chunks.push(c));
      response.on("end", () => {
        try {
          resolve(Number((JSON.parse(Buffer.concat(chunks).toString()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion));
        } catch (e) {
          reject(e as Error);
        }
      });
      response.on("error", reject);
    }).on("error", reject);
  });
}

async function eachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

serveParent(async () => {
  const generator = new LoadGenerator();
  return {
    info: { pid: process.pid },
    ops: methodsOf(generator),
    stop: () => generator.close(),
  };
});
