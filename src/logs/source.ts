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
 * the log's start when the probe had all of it).
 *
 * The upstream is held to bounds of the relay's own, not to the `limitBytes` it was asked for:
 * a probe is read to 1 MiB and for at most `LOG_UPSTREAM_TIMEOUT_SECONDS` (what it has then is
 * the buffer's start; nothing at all is a `504` for every waiting follower), a stream's lines are
 * cut into fragments of 64 KiB (`LogLineReader`), a follow or a history must answer within that
 * timeout, and a history that stops sending for as long fails its follower, who leaves it
 * cancelled (`LogFanout`), as the stream is once nobody follows. The same join renews the stream from the
 * heartbeat (`WATCH_RENEW_SECONDS`, as a watch hub renews its upstream watch: no invocation reads
 * a stream for longer). When the stream ends on its own — the container stopped, as the API server
 * ends `kubectl logs -f` then — the buffer is marked ended and its followers end once they have
 * it all; the next follower starts a new probe, stream and buffer (the container's next run).
 */
import { comparePlace, LogLineReader, readLines, type LinePlace, type LogLine } from "../k8s/log-lines.ts";
import type { LogOptions } from "../k8s/log-options.ts";
import { floorSecond } from "../k8s/rfc3339.ts";
import type { Result } from "../k8s/status.ts";
import { readAtMost } from "../bounded-read.ts";
import type { Log } from "../log.ts";
import { unreachable, type Upstream } from "../upstream.ts";
import type { Clock } from "../hub/clock.ts";
import { LogBuffer, type LogMemory } from "./buffer.ts";
import type { LogKey } from "./request.ts";
import { fetchLog, logRefusal, upstreamTimeout } from "./upstream.ts";

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
  readonly #timeoutMs: number;
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

  /** `timeoutMs`: `LOG_UPSTREAM_TIMEOUT_SECONDS`. */
  constructor(key: LogKey, upstream: Upstream, timeoutMs: number, buffer: { memory: LogMemory; maxLines: number }, events: SourceEvents, observer: SourceObserver, log: Log, clock: Clock) {
    this.#key = key;
    this.#upstream = upstream;
    this.#timeoutMs = timeoutMs;
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

  /**
   * A follower's own read of the log (not followed, with timestamps): its body, which fails once
   * the upstream sends nothing for the timeout while it is read; or the Status of why there is none.
   */
  async history(options: LogOptions): Promise<Result<ReadableStream<Uint8Array>>> {
    this.#observer.requested("history");
    const { tailLines, sinceSeconds, sinceTime } = options;
    const abort = new AbortController();
    const cancel = this.#clock.after(this.#timeoutMs, () => abort.abort());
    try {
      let answer: Response;
      try {
        answer = await fetchLog(this.#upstream, this.#key, { ...this.#base(), timestamps: true, tailLines, sinceSeconds, sinceTime }, abort.signal);
      } catch (e) {
        return { ok: false, status: abort.signal.aborted ? upstreamTimeout("a follower's read of the log", this.#timeoutMs) : unreachable(e) };
      }
      if (!answer.ok) return { ok: false, status: await logRefusal(answer, abort.signal) };
      return { ok: true, value: answer.body ? stallGuard(answer.body, this.#timeoutMs, this.#clock) : new ReadableStream({ start: (c) => c.close() }) };
    } finally {
      cancel();
    }
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
    // The whole probe within the timeout, its body included: what it has then is what it has.
    const abort = new AbortController();
    const cancel = this.#clock.after(this.#timeoutMs, () => abort.abort());
    let head: { bytes: Uint8Array; whole: boolean };
    try {
      let probe: Response;
      try {
        this.#observer.requested("history");
        probe = await fetchLog(this.#upstream, this.#key, { ...this.#base(), timestamps: true, tailLines, limitBytes: PROBE_BYTES }, abort.signal);
      } catch (e) {
        return { ok: false, status: abort.signal.aborted ? upstreamTimeout("the log's first read", this.#timeoutMs) : unreachable(e) };
      }
      if (!probe.ok) return { ok: false, status: await logRefusal(probe, abort.signal) };
      head = await readAtMost(probe.body, PROBE_BYTES, abort.signal);
    } finally {
      cancel();
    }
    if (!head.whole) this.#log("the upstream's first read of the log was cut short", { bytes: head.bytes.length, why: abort.signal.aborted ? "timeout" : "too long" });
    const body = head.bytes;
    let lines = readLines(body);
    const cut = lines.length >= tailLines || !head.whole;
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
    // Its answer, a refusal's body included, within the timeout; its lines as long as they come.
    let timedOut = false;
    const cancel = this.#clock.after(this.#timeoutMs, () => {
      timedOut = true;
      stream.abort.abort();
    });
    try {
      this.#observer.requested("follow");
      const response = await fetchLog(this.#upstream, this.#key, { ...this.#base(), follow: true, timestamps: true, sinceTime: after ? floorSecond(after.time) : undefined }, stream.abort.signal);
      if (!current()) return void response.body?.cancel().catch(() => undefined);
      if (!response.ok) {
        const status = await logRefusal(response, stream.abort.signal);
        why = `the upstream refused the log stream (${status.code}): ${status.message}`;
      } else {
        cancel();
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
      why = timedOut ? `the upstream did not answer the log stream within ${this.#timeoutMs / 1000} s (LOG_UPSTREAM_TIMEOUT_SECONDS)` : `the upstream log stream failed: ${String(e)}`;
    } finally {
      cancel();
    }
    if (!current()) return;
    this.#stream = undefined;
    buffer.ended = true;
    this.#log("upstream log stream ended", { why });
    this.#events.ended(buffer, why);
  }
}

/**
 * `body`, failed once the upstream sends nothing for `ms` while it is being read: a read that is
 * not followed has no reason to pause, and one that does would hold its follower and its
 * connection for as long as the upstream likes. Only time spent waiting on the upstream counts:
 * the body is pulled as its reader takes it.
 */
function stallGuard(body: ReadableStream<Uint8Array>, ms: number, clock: Clock): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let stalled = false;
        const cancel = clock.after(ms, () => {
          stalled = true;
          void reader.cancel().catch(() => undefined);
        });
        try {
          const read = await reader.read();
          if (stalled) controller.error(new Error(`the upstream sent nothing for ${ms / 1000} s (LOG_UPSTREAM_TIMEOUT_SECONDS)`));
          else if (read.done) controller.close();
          else controller.enqueue(read.value);
        } catch (e) {
          controller.error(e);
        } finally {
          cancel();
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}
