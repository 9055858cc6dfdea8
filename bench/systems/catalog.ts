/**
 * @module
 * Every system the bench can measure, with what is known of it before anything starts. Adding a
 * system is an entry here, a host that starts it, and a launcher in `bench/run.ts`.
 */
import { BATCH_PROTOCOL, DELTA_PROTOCOL, GZIP_BATCH_PROTOCOL } from "../../src/k8s/websocket.ts";
import type { Sizes } from "../modes.ts";

/** How subscribers watch: a WebSocket, or an HTTP chunked response of event lines. */
export type Transport = "ws" | "http";

export interface SystemFacts {
  readonly transports: readonly Transport[];
  readonly color: string;
  /** Measured in fan-out at the `secondary` sizes only (and in the burst): there to show what it costs. */
  readonly secondary?: boolean;
  /** Measured in this scenario only. */
  readonly only?: string;
  about(sizes: Sizes): string;
}

const at = (sizes: Sizes) => `${sizes.fanout.secondary.subscribers.join(" and ")} subscribers × ${sizes.fanout.secondary.rates.join(" and ")} events/s`;

export const CATALOG = {
  relay: {
    transports: ["ws", "http"],
    color: "#f38020",
    about: () =>
      "**relay**: this project as `npm start` serves it (`scripts/runtime.ts`: the Worker bundled as wrangler bundles it, run by Miniflare in one workerd process configured from `wrangler.toml`, with nothing but the runtime between subscribers and the relay). " +
      'WebSocket subscribers open `ws://…/api/v1/namespaces/<ns>/pods?watch=1` and acknowledge every 256 KiB they receive (`{"type":"ACK","received":n}`); they get one event per WebSocket message: the API server\'s framing, and the relay\'s default. ' +
      "HTTP subscribers open the same URL over `http://`, as kubectl, client-go and client-node informers do, and read a chunked response of newline-separated events.",
  },
  "relay-batched": {
    transports: ["ws"],
    color: "#dc2626",
    about: () =>
      `**relay-batched**: the same relay process, whose subscribers opt in to its batch framing by offering the \`${BATCH_PROTOCOL}\` WebSocket subprotocol: ` +
      "each message carries the events that were ready together, newline-separated, so the more load, the more events each message carries; a replay after a resume goes out in slices of many events a message. " +
      "Its subscribers acknowledge as the relay's do, and split every message into its events before counting and timing them. Opt-in only: a client that does not offer the subprotocol is never sent a batch.",
  },
  "relay-delta": {
    transports: ["ws"],
    color: "#be185d",
    about: () =>
      `**relay-delta**: the same relay process, whose subscribers watch as the project's client does: they offer \`${DELTA_PROTOCOL}\` (the batch framing, plus a MODIFIED of an object they have as a JSON merge patch when that is shorter) and resume with \`compact=true\` (each changed object once, and the deletions, instead of every event). ` +
      "They acknowledge, split messages into lines and read a delta's new resourceVersion and write stamp from its patch.",
  },
  "relay-gzip": {
    transports: ["ws"],
    color: "#7c2d12",
    secondary: true,
    about: (sizes) =>
      `**relay-gzip**: the same relay process, whose subscribers offer \`${GZIP_BATCH_PROTOCOL}\`: the batch framing, each message of at least 512 characters sent as a binary message holding one gzip member of its text (compressed once for every subscriber it goes to). ` +
      "Its subscribers gunzip those, then split and count events as relay-batched's do, and acknowledge the decompressed length, as the relay counts; the bytes on the wire are counted apart. " +
      `Measured against relay-batched in fanout at ${at(sizes)}, in the burst, and in big's initial state, for what compression saves on the wire and costs the relay.`,
  },
  "relay-socket": {
    transports: ["ws"],
    color: "#e11d48",
    only: "sockets",
    about: (sizes) =>
      `**relay-socket**: the same relay process, whose clients each open one relay socket (\`/_relay/socket\`, offering the \`${BATCH_PROTOCOL}\` subprotocol) and ${sizes.sockets.watchesPerClient} watches on it by message, as a browser tab with several panels does; ` +
      "the socket's mux object holds one batched, acknowledged WebSocket watch to each watch's hub and forwards its events, tagged with the watch's id. " +
      "Its clients acknowledge every 256 KiB as the relay's do, split every message into its events, and resume a watch the relay ends from that watch's last resourceVersion. Measured in the sockets scenario only.",
  },
  "relay-proxied": {
    transports: ["ws", "http"],
    color: "#b45309",
    secondary: true,
    about: (sizes) =>
      "**relay-proxied**: the relay as `npm run dev` serves it: `wrangler dev`, which puts a proxy worker in front of the relay's workerd, in a second workerd process (for live reload); both processes' CPU is counted. " +
      `Measured in the burst, and in fanout at ${at(sizes)}, over both transports, to show what that hop costs. Production has no such hop.`,
  },
  "workerd-floor": {
    transports: ["ws"],
    color: "#9333ea",
    about: () =>
      "**workerd-floor** (`bench/floor/worker.ts`): a Durable Object per collection forwarding the upstream watch's lines, as received, to hibernatable WebSockets: no parsing, storage or acknowledgements. It keeps the last 10,000 lines in a plain list, as raw-ws does, so it resumes too. What WebSocket fan-out, and a storm of per-event resumes, cost in workerd itself; not a relay.",
  },
  direct: {
    transports: ["http"],
    color: "#6b7280",
    about: () => "**direct**: no relay; every subscriber holds its own HTTP watch on the API server.",
  },
  "node-relay": {
    transports: ["ws", "http"],
    color: "#2563eb",
    about: () =>
      "**node-relay**: the usual self-hosted alternative: one `@kubernetes/client-node` watch per collection in a Node process, each event `JSON.stringify`'d once, sent to every `ws` client and written, newline-terminated, to every open HTTP watch response (one server for both, in one process). No resume.",
  },
  "raw-ws": {
    transports: ["ws"],
    color: "#16a34a",
    about: () =>
      "**raw-ws** (`bench/hosts/raw.ts`): the practical ceiling for WebSocket fan-out on this machine: a Node `ws` server forwarding each upstream line's bytes, pre-serialised, to every socket; it keeps the last 10,000 lines, so it resumes too.",
  },
  "raw-http": {
    transports: ["http"],
    color: "#0d9488",
    about: () =>
      "**raw-http**: the same program as raw-ws in a process of its own, serving HTTP watches: a Node `http` server writing each upstream line's bytes, newline included, to every open chunked response. The practical ceiling for HTTP watch fan-out, as raw-ws is for WebSockets.",
  },
} as const satisfies Record<string, SystemFacts>;

export type SystemName = keyof typeof CATALOG;

export const SYSTEM_NAMES = Object.keys(CATALOG) as SystemName[];

/** All but those measured in one scenario only. */
export const GENERAL_SYSTEMS: readonly SystemName[] = SYSTEM_NAMES.filter((name) => (CATALOG[name] as SystemFacts).only === undefined);

export const factsOf = (name: SystemName): SystemFacts => CATALOG[name];

/** A system on one transport: "relay http", but "raw-ws" (it has only the one). */
export const labelOf = (system: SystemName, transport: Transport): string => (CATALOG[system].transports.length > 1 ? `${system} ${transport}` : system);
