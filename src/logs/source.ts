/**
 * @module
 * A log hub's one upstream stream, into its buffer. It starts in two reads of the log, joined:
 * - a probe: the last `LOG_BUFFER_LINES` lines (at most 1 MiB), not followed, with timestamps:
 *   the buffer's start, and the answer that says whether the log can be read at all (the pod
 *   exists, the container has started: the upstream's `404`/`400` is every waiting follower's);
 * - the stream: `follow=true&timestamps=true` from the second of the probe's last line
 *   (`sinceTime`, which the API server passes on to the second), whose lines up to that last one
 *   are dropped by their place in the log (timestamp, then place among lines of that timestamp).
 * So the buffer holds the log without a gap or a duplicate from the probe's first line on (from
 * the log's start when the probe had all of it). The same join renews the stream from the
 * heartbeat (`WATCH_RENEW_SECONDS`, as a watch hub renews its upstream watch: no invocation reads
 * a stream for longer). When the stream ends on its own — the container stopped, as the API server
 * ends `kubectl logs -f` then — the buffer is marked ended and its followers end once they have
 * it all; the next follower starts a new probe, stream and buffer (the container's next run).
 */
import { comparePlace, LogLineReader, readLines, type LinePlace, type LogLine } from "../k8s/log-lines.ts";
import type { LogOptions } from "../k8s/log-options.ts";
import { floorSecond } from "../k8s/rfc3339.ts";
import type { Result } from "../k8s/status.ts";
import type { Log } from "../log.ts";
import { unreachable, type Upstream } from "../upstream.ts";
import type { Clock } from "../hub/clock.ts";
import { LogBuffer, type LogMemory } from "./buffer.ts";
import type { LogKey } from "./request.ts";
import { fetchLog, logRefusal } from "./upstream.ts";

/** The most a probe reads: a buffer's worth of ordinary lines. */
export const PROBE_BYTES = 1024 * 1024;

export interface SourceEvents {
  /** Lines were added to `buffer`. */
  published(buffer: LogBuffer): void;
  /** `buffer`'s stream ended: no line will follow its last. */
  ended(buffer: LogBuffer, why: string): void;
}

/** What the source counts (metrics): requests upstream by kind, and lines read from its streams. */
export interface SourceObserver {
  requested(kind: "follow" | "history"): void;
  read(lines: number): void;
}

export class LogSource {
  readonly #key: LogKey;
  readonly #upstream: Upstream;
  readonly #memory: LogMemory;
  readonly #maxLines: number;
  readonly #events: SourceEvents;
  readonly #observer: SourceObserver;
  readonly #log: Log;
  readonly #clock: Clock;
  #buffer: LogBuffer | undefined;
  #starting: Promise<Result<LogBuffer>> | undefined;
  /** The stream being read into the current buffer, and since when. */
  #stream: { abort: AbortController; openedAt: number } | undefined;
  /** Bumped by every new stream and by a stop: a loop of an older one only stops. */
  #generation = 0;

  constructor(key: LogKey, upstream: Upstream, buffer: { memory: LogMemory; maxLines: number }, events: SourceEvents, observer: SourceObserver, log: Log, clock: Clock) {
    this.#key = key;
    this.#upstream = upstream;
    this.#memory = buffer.memory;
    this.#maxLines = buffer.maxLines;
    this.#events = events;
    this.#observer = observer;
    this.#log = log;
    this.#clock = clock;
  }

  /** A stream is being read (or opened). */
  get streaming(): boolean {
    return this.#stream !== undefined;
  }

  get buffer(): LogBuffer | undefined {
    return this.#buffer;
  }

  /** The buffer a new follower joins: the current one, or a new one whose stream starts now; or the upstream's refusal. */
  open(): Promise<Result<LogBuffer>> {
    const current = this.#buffer;
    if (current && !current.ended) return Promise.resolve({ ok: true, value: current });
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  /** A follower's own read of the log (not followed, with timestamps): the answer, whatever it is, or why there is none. */
  async history(options: LogOptions): Promise<Response> {
    this.#observer.requested("history");
    const { tailLines, sinceSeconds, sinceTime } = options;
    return fetchLog(this.#upstream, this.#key, { ...this.#base(), timestamps: true, tailLines, sinceSeconds, sinceTime });
  }

  /** From the heartbeat: a stream read for longer than `maxAgeMs` goes on in a new one, joined where the old left off. */
  renew(maxAgeMs: number): void {
    const buffer = this.#buffer;
    const stream = this.#stream;
    if (!buffer || buffer.ended || !stream || this.#clock.now() - stream.openedAt < maxAgeMs) return;
    const last = buffer.size > 0 ? buffer.at(buffer.head - 1) : undefined;
    // A long line part-way through would be cut or repeated where the streams meet: the next beat renews.
    if (last && !last.complete) return;
    this.#log("renewing the upstream log stream", { ageMs: this.#clock.now() - stream.openedAt });
    void this.#follow(buffer, last);
  }

  /** Nobody follows any more: the stream ends and the buffer goes. */
  stop(): void {
    this.#generation++;
    this.#stream?.abort.abort();
    this.#stream = undefined;
    this.#buffer?.release();
    this.#buffer = undefined;
  }

  #base(): Partial<LogOptions> {
    return { container: this.#key.container, previous: this.#key.previous };
  }

  async #start(): Promise<Result<LogBuffer>> {
    const tailLines = Math.max(1, this.#maxLines);
    let probe: Response;
    try {
      this.#observer.requested("history");
      probe = await fetchLog(this.#upstream, this.#key, { ...this.#base(), timestamps: true, tailLines, limitBytes: PROBE_BYTES });
    } catch (e) {
      return { ok: false, status: unreachable(e) };
    }
    if (!probe.ok) return { ok: false, status: await logRefusal(probe) };
    const body = new Uint8Array(await probe.arrayBuffer());
    let lines = readLines(body);
    const cut = lines.length >= tailLines || body.length >= PROBE_BYTES;
    // A last line without its newline is being written: the stream brings it whole.
    if (lines.length > 0 && !(lines.at(-1) as LogLine).complete) lines = lines.slice(0, -1);
    // Nothing read: the stream starts at the log's start, so the buffer will hold all of it.
    const whole = lines.length === 0 || !cut;
    this.#buffer?.release();
    const buffer = new LogBuffer(this.#memory, this.#maxLines, lines, whole);
    this.#buffer = buffer;
    void this.#follow(buffer, lines.at(-1));
    return { ok: true, value: buffer };
  }

  /** Read a stream from the second of `after` (or the log's start) into `buffer`, dropping what is not after it. */
  async #follow(buffer: LogBuffer, after: LinePlace | undefined): Promise<void> {
    const generation = ++this.#generation;
    this.#stream?.abort.abort();
    const stream = { abort: new AbortController(), openedAt: this.#clock.now() };
    this.#stream = stream;
    const current = () => generation === this.#generation;
    const lines = new LogLineReader();
    let skipUntilAfter = after;
    const take = (read: LogLine[]) => {
      let taken = 0;
      for (const line of read) {
        if (skipUntilAfter && comparePlace(line, skipUntilAfter) <= 0) continue;
        skipUntilAfter = undefined;
        buffer.push(line);
        taken++;
      }
      if (taken === 0) return;
      this.#observer.read(taken);
      this.#events.published(buffer);
    };
    let why: string;
    try {
      this.#observer.requested("follow");
      const response = await fetchLog(this.#upstream, this.#key, { ...this.#base(), follow: true, timestamps: true, sinceTime: after ? floorSecond(after.time) : undefined }, stream.abort.signal);
      if (!current()) return void response.body?.cancel().catch(() => undefined);
      if (!response.ok) {
        const status = await logRefusal(response);
        why = `the upstream refused the log stream (${status.code}): ${status.message}`;
      } else {
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (!current()) return void reader.cancel().catch(() => undefined);
          if (done) break;
          take(lines.push(value));
        }
        const last = lines.finish();
        if (last) take([last]);
        why = "the container's log ended";
      }
    } catch (e) {
      if (!current()) return;
      why = `the upstream log stream failed: ${String(e)}`;
    }
    if (!current()) return;
    this.#stream = undefined;
    buffer.ended = true;
    this.#log("upstream log stream ended", { why });
    this.#events.ended(buffer, why);
  }
}
