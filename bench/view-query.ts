/**
 * @module
 * A live view's window as the views scenario asks for it, and its query string.
 */

export interface ViewQuery {
  sort: string;
  filter?: string;
  offset: number;
  limit: number;
}

export const viewQuery = (q: ViewQuery): string => `view=1&sort=${encodeURIComponent(q.sort)}${q.filter ? `&filter=${encodeURIComponent(q.filter)}` : ""}&offset=${q.offset}&limit=${q.limit}`;
