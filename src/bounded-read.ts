/**
 * @module
 * A body read to a bound of the relay's own: what an upstream sends is never trusted to end, or
 * to end soon (a broken or hostile one can send a line of gigabytes, or hold its connection open
 * with nothing more to say). The rest of a body read so far is cancelled, never read.
 */

/** The first bytes of a body, and whether they are all of it. */
export interface BodyHead {
  bytes: Uint8Array;
  whole: boolean;
}

/**
 * Read `body` until it ends, `max` bytes are read, or `signal` is aborted (a deadline), whichever
 * comes first: no more than `max` bytes are kept, and whatever was read by then is the answer.
 */
export async function readAtMost(body: ReadableStream<Uint8Array> | null, max: number, signal?: AbortSignal): Promise<BodyHead> {
  if (!body) return { bytes: new Uint8Array(0), whole: true };
  const reader = body.getReader();
  // A read the runtime does not end on an abort still loses the race against it.
  const aborted = signal && new Promise<undefined>((resolve) => (signal.aborted ? resolve(undefined) : signal.addEventListener("abort", () => resolve(undefined), { once: true })));
  const chunks: Uint8Array[] = [];
  let length = 0;
  let whole = false;
  try {
    for (;;) {
      const read = aborted ? await Promise.race([reader.read(), aborted]) : await reader.read();
      if (read === undefined) break;
      if (read.done) {
        whole = true;
        break;
      }
      const value = length + read.value.length > max ? read.value.subarray(0, max - length) : read.value;
      chunks.push(value);
      length += value.length;
      if (value !== read.value) break;
    }
  } catch (e) {
    if (!signal?.aborted) throw e;
  }
  if (!whole) void reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes, whole };
}
