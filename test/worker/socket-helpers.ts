/**
 * Helpers for the relay socket (`/_relay/socket`) in the Workers tests: a socket whose lines
 * are sorted by watch id and awaited one by one.
 */
import { gunzipSync } from "node:zlib";
import type { MuxOp } from "../../src/k8s/mux.ts";
import type { KubeObject, Status } from "../../src/k8s/types.ts";
import { BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import { Inbox } from "../kit/inbox.ts";
import { relay } from "./helpers.ts";

/** A line from the relay socket, parsed. */
export interface SocketLine {
  id?: string;
  type: string;
  object?: KubeObject & Partial<Status>;
  code?: number;
  reason?: string;
  resourceVersion?: string;
}

export interface RelaySocket {
  socket: WebSocket;
  /** The subprotocol the relay echoed (`null`: none). */
  accepted: string | null;
  /** Messages as received (a binary one, of the gzip framing: the text it holds), for framing checks. */
  messages: string[];
  /** Each message as it was on the wire: binary or text, and its size there (bytes, or UTF-16 units). */
  frames: Array<{ binary: boolean; wire: number }>;
  /** Lines of watch `id` (or, for `""`, the socket-level ones). */
  lines(id: string): Inbox<SocketLine>;
  send(op: MuxOp | Record<string, unknown> | string): void;
  /** Resolves with the socket's close. */
  closed: Inbox<never>;
  close(): void;
}

/** Open a relay socket; `protocol` is what is offered (the batch subprotocol by default; `null`: none). */
export async function relaySocket(headers: Record<string, string> = {}, protocol: string | null = BATCH_PROTOCOL): Promise<RelaySocket> {
  const response = await relay("/_relay/socket", { headers: { upgrade: "websocket", ...(protocol ? { "sec-websocket-protocol": protocol } : {}), ...headers } });
  const socket = response.webSocket;
  if (!socket) throw new Error(`expected a WebSocket upgrade, got ${response.status}: ${await response.text()}`);
  // The gzip framing's binary messages as ArrayBuffers, not the Blobs they would be by default.
  socket.binaryType = "arraybuffer";
  socket.accept();
  const inboxes = new Map<string, Inbox<SocketLine>>();
  const lines = (id: string) => {
    let inbox = inboxes.get(id);
    if (!inbox) inboxes.set(id, (inbox = new Inbox<SocketLine>()));
    return inbox;
  };
  const messages: string[] = [];
  const frames: Array<{ binary: boolean; wire: number }> = [];
  const closed = new Inbox<never>();
  socket.addEventListener("message", (m) => {
    const data = m.data as string | ArrayBuffer;
    // Decompressed at once, so the messages stay in order and an ACK sent from a later listener counts this one.
    const text = typeof data === "string" ? data : new TextDecoder().decode(gunzipSync(new Uint8Array(data)));
    frames.push({ binary: typeof data !== "string", wire: typeof data === "string" ? data.length : data.byteLength });
    messages.push(text);
    for (const line of text.split("\n")) {
      if (!line) continue;
      const parsed = JSON.parse(line) as SocketLine;
      lines(parsed.id ?? "").push(parsed);
    }
  });
  socket.addEventListener("close", (e) => {
    closed.end({ code: e.code, reason: e.reason });
    for (const inbox of inboxes.values()) inbox.end({ code: e.code, reason: e.reason });
  });
  return {
    socket,
    accepted: response.headers.get("sec-websocket-protocol"),
    messages,
    frames,
    lines,
    send: (op) => socket.send(typeof op === "string" ? op : JSON.stringify(op)),
    closed,
    close: () => socket.close(1000, "test done"),
  };
}

/** Lines of a watch until (and with) its CLOSED. */
export function untilClosed(inbox: Inbox<SocketLine>): Promise<SocketLine[]> {
  return inbox.until((line) => line.type === "CLOSED", "the watch's CLOSED");
}

/** Names of the objects of `count` events of a watch, skipping BOOKMARKs. */
export async function names(inbox: Inbox<SocketLine>, count: number): Promise<string[]> {
  const seen: string[] = [];
  while (seen.length < count) {
    const line = await inbox.next(`${count} events`);
    if (line.type === "BOOKMARK") continue;
    if (line.type === "ERROR" || line.type === "CLOSED") throw new Error(`the watch ended: ${JSON.stringify(line)}`);
    seen.push(`${line.type} ${line.object?.metadata?.name}`);
  }
  return seen;
}
