/**
 * @module
 * Split a byte stream into newline-delimited lines. Watch streams are one JSON document per
 * line (apiserver `WatchServer`, `json.Encoder.Encode`); chunk boundaries fall anywhere,
 * including inside a multi-byte character, so bytes are decoded with a streaming decoder and
 * only complete lines are returned. A line that spans many chunks is kept as its pieces and
 * joined once, when it ends (not copied again with every chunk), and one longer than the
 * splitter allows (`maxLineChars`) fails the stream before more of it is held.
 */

/** A line grew past the length the splitter allows. */
export class LineTooLong extends Error {
  /** Characters of it held when it was refused (it may be longer). */
  readonly chars: number;
  readonly limit: number;
  constructor(chars: number, limit: number) {
    super(`a line of more than ${limit} characters (${chars} so far)`);
    this.chars = chars;
    this.limit = limit;
  }
}

export class LineSplitter {
  readonly #decoder = new TextDecoder();
  readonly #max: number;
  /** The unfinished line, in the pieces it came in, and its length. */
  #pieces: string[] = [];
  #partial = 0;

  /** `maxLineChars`: the longest a line may be, in characters. */
  constructor(maxLineChars = Number.POSITIVE_INFINITY) {
    this.#max = maxLineChars;
  }

  /** Feed a chunk; returns the complete lines it finished (without their `\n`, blank lines dropped). */
  push(chunk: Uint8Array | string): string[] {
    const text = typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true });
    const lines: string[] = [];
    let from = 0;
    for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", from)) {
      let line = text.slice(from, end);
      if (this.#pieces.length > 0) {
        this.#pieces.push(line);
        line = this.#pieces.join("");
        this.#pieces = [];
        this.#partial = 0;
      }
      if (line.length > this.#max) throw new LineTooLong(line.length, this.#max);
      if (line.trim().length > 0) lines.push(line);
      from = end + 1;
    }
    if (from < text.length) {
      this.#partial += text.length - from;
      if (this.#partial > this.#max) throw new LineTooLong(this.#partial, this.#max);
      this.#pieces.push(from === 0 ? text : text.slice(from));
    }
    return lines;
  }

  /** Bytes of an unfinished line held back, e.g. when a stream ends mid-event. */
  get pending(): number {
    return this.#partial;
  }
}
