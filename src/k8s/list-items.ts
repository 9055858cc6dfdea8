/**
 * @module
 * A JSON list body (`{"kind":…,"metadata":{…},"items":[{…},{…}]}`) taken apart as it arrives,
 * without holding it whole: its head (every field but the items, parsed) once the items begin,
 * then each item's JSON text as it completes. A list of any size costs one item's text, not the
 * list's. `items` must be the body's last field, as the relay and the API server write lists.
 */

export interface ListPieces {
  /** Every field of the list but its items, once they begin (given once). */
  head?: Record<string, unknown>;
  /** Items completed by this chunk, each its JSON text. */
  items: string[];
}

export class ListItems {
  /** What is kept of the text: the head until the items begin, then the unfinished item. */
  #text = "";
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** The items' array is open: its elements are at depth 2. */
  #inItems = false;
  #ended = false;

  /** Whether the whole list has arrived. */
  get ended(): boolean {
    return this.#ended;
  }

  push(chunk: string): ListPieces {
    const pieces: ListPieces = { items: [] };
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === 0x5c) this.#escaped = true;
        else if (c === 0x22) this.#inString = false;
        continue;
      }
      if (c === 0x22) {
        this.#inString = true;
      } else if (c === 0x7b || c === 0x5b) {
        this.#depth++;
        if (c === 0x5b && this.#depth === 2 && !this.#inItems) {
          // An array opened at the list's top level: the items, if its key says so.
          const head = this.#text + chunk.slice(from, i);
          const key = /,?\s*"items"\s*:\s*$/.exec(head);
          if (key) {
            pieces.head = JSON.parse(`${head.slice(0, key.index)}}`) as Record<string, unknown>;
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
          pieces.items.push(this.#text + chunk.slice(from, i + 1));
          this.#text = "";
          from = i + 1;
        } else if (this.#inItems && this.#depth === 1) {
          this.#inItems = false;
          from = i + 1;
        } else if (this.#depth === 0) {
          this.#ended = true;
        }
      }
    }
    // Between items there is only a comma or whitespace to keep; within one, what it has so far.
    if (!this.#inItems || this.#depth > 2) this.#text += chunk.slice(from);
    return pieces;
  }
}
