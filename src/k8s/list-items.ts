/**
 * @module
 * A JSON list body (`{"kind":…,"metadata":{…},"items":[{…},{…}]}`) taken apart as it arrives,
 * without holding it whole: its head (every field but the items, parsed) once the items begin,
 * then each item's JSON text as it completes. A list of any size costs one item's text, not the
 * list's, and an item may be refused past a size (`maxItemChars`) before more of it is held.
 * `items` must be the body's last field, as the relay and the API server write lists.
 */

export interface ListPieces {
  /** Every field of the list but its items, once they begin, or once the list ends without any (given once). */
  head?: Record<string, unknown>;
  /** Items completed by this chunk, each its JSON text. */
  items: string[];
}

/** An item (or the head) of a list grew past the size it may have. */
export class ListItemTooLarge extends Error {
  /** Characters of it read when it was refused (it may be longer). */
  readonly chars: number;
  readonly limit: number;
  constructor(chars: number, limit: number) {
    super(`a list item of more than ${limit} characters (${chars} so far)`);
    this.chars = chars;
    this.limit = limit;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class ListItems {
  readonly #max: number;
  /** What is kept of the text: the head until the items begin, then the unfinished item. */
  #text = "";
  #depth = 0;
  #inString = false;
  /** The last chunk ended inside a string right after a backslash: the next chunk's first character is escaped. */
  #escaped = false;
  /** The items' array is open: its elements are at depth 2. */
  #inItems = false;
  #ended = false;
  #headGiven = false;

  /** `maxItemChars`: the longest an item (or the head) may be, in characters. */
  constructor(maxItemChars = Number.POSITIVE_INFINITY) {
    this.#max = maxItemChars;
  }

  /** Whether the whole list has arrived. */
  get ended(): boolean {
    return this.#ended;
  }

  push(chunk: string): ListPieces {
    const pieces: ListPieces = { items: [] };
    let from = 0;
    let i = 0;
    if (this.#inString && this.#escaped && chunk.length > 0) {
      this.#escaped = false;
      i = 1;
    }
    for (; i < chunk.length; i++) {
      if (this.#inString) {
        // A string's contents are skipped whole: the next quote not escaped by an odd run of backslashes.
        const end = closingQuote(chunk, i);
        if (end < 0) {
          this.#escaped = backslashesBefore(chunk, chunk.length, i) % 2 === 1;
          break;
        }
        this.#inString = false;
        i = end;
        continue;
      }
      const c = chunk.charCodeAt(i);
      if (c === QUOTE) {
        this.#inString = true;
      } else if (c === 0x7b || c === 0x5b) {
        this.#depth++;
        if (c === 0x5b && this.#depth === 2 && !this.#inItems) {
          // An array opened at the list's top level: the items, if its key says so.
          const head = this.#text + chunk.slice(from, i);
          const key = /,?\s*"items"\s*:\s*$/.exec(head);
          if (key) {
            pieces.head = JSON.parse(`${head.slice(0, key.index)}}`) as Record<string, unknown>;
            this.#headGiven = true;
            this.#inItems = true;
            this.#text = "";
            from = i + 1;
          }
        } else if (this.#inItems && this.#depth === 3) {
          this.#text = "";
          from = i;
        }
      } else if (c === 0x7d || c === 0x5d) {
        this.#depth--;
        if (this.#inItems && this.#depth === 2 && c === 0x7d) {
          const item = this.#text + chunk.slice(from, i + 1);
          if (item.length > this.#max) throw new ListItemTooLarge(item.length, this.#max);
          pieces.items.push(item);
          this.#text = "";
          from = i + 1;
        } else if (this.#inItems && this.#depth === 1) {
          this.#inItems = false;
          from = i + 1;
        } else if (this.#depth === 0) {
          this.#ended = true;
          // A list without items (`"items":null`, or none): its head is all of it.
          if (!this.#headGiven) {
            const { items: _, ...head } = JSON.parse(this.#text + chunk.slice(from, i + 1)) as Record<string, unknown>;
            pieces.head = head;
            this.#headGiven = true;
          }
        }
      }
    }
    // Between items there is only a comma or whitespace to keep; within one, what it has so far.
    if (!this.#ended && (!this.#inItems || this.#depth > 2)) {
      if (this.#text.length + chunk.length - from > this.#max) throw new ListItemTooLarge(this.#text.length + chunk.length - from, this.#max);
      this.#text += chunk.slice(from);
    }
    return pieces;
  }
}

/** Where the string being read in `text` from `from` on ends (its closing quote), or -1 if not in `text`. */
function closingQuote(text: string, from: number): number {
  for (let at = text.indexOf('"', from); at >= 0; at = text.indexOf('"', at + 1)) {
    if (backslashesBefore(text, at, from) % 2 === 0) return at;
  }
  return -1;
}

/** How many backslashes run back from just before `at`, no further back than `from`. */
function backslashesBefore(text: string, at: number, from: number): number {
  let n = 0;
  while (at - n - 1 >= from && text.charCodeAt(at - n - 1) === BACKSLASH) n++;
  return n;
}
