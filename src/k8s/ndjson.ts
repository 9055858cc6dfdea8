/**
 * @module
 * Split a byte stream into newline-delimited lines. Watch streams are one JSON document per
 * line (apiserver `WatchServer`, `json.Encoder.Encode`); chunk boundaries fall anywhere,
 * including inside a multi-byte character, so bytes are decoded with a streaming decoder and
 * only complete lines are returned.
 */

export class LineSplitter {
  readonly #decoder = new TextDecoder();
  #partial = "";

  /** Feed a chunk; returns the complete lines it finished (without their `\n`, blank lines dropped). */
  push(chunk: Uint8Array | string): string[] {
    const text = this.#partial + (typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true }));
    const lines = text.split("\n");
    this.#partial = lines.pop() ?? "";
    return lines.filter((line) => line.trim().length > 0);
  }

  /** Bytes of an unfinished line held back, e.g. when a stream ends mid-event. */
  get pending(): number {
    return this.#partial.length;
  }
}
