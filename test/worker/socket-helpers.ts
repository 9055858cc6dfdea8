/**
 * Helpers for the relay socket (`/_relay/socket`) in the Workers tests: a socket whose lines
 * are sorted by watch id and awaited one by one.
 */
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
  /** Messages as received, for framing checks. */
  messages: string[];
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
  socket.accept();
  const inboxes = new Map<string, Inbox<SocketLine>>();
  const lines = (id: string) => {
    let inbox = inboxes.get(id);
    if (!inbox) inboxes.set(id, (inbox = new Inbox<SocketLine>()));
    return inbox;
  };
  const messages: string[] = [];
  const closed = new Inbox<never>();
  socket.addEventListener("message", (m) => {
    messages.push(m.data as string);
    for (const line of (m.data as string).split("\n")) {
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
    messages,
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
