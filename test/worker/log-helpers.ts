/**
 * Pod logs in the Workers tests: pods whose containers run (and write a line every few
 * milliseconds) on a simulated cluster, restarts, and followers of a log through the relay, over
 * HTTP or a WebSocket, whose bytes are kept whole and whose end is awaited.
 */
import type { KubeObject } from "../../src/k8s/types.ts";
import { logBytes } from "../../src/k8s/log-socket.ts";
import { Changes } from "../kit/wait.ts";
import { relay, type Sim } from "./helpers.ts";

/** The simulator's annotation for a pod's own pace of log lines (src/sim/logs.ts). */
const LOG_INTERVAL_ANNOTATION = "sim.kube-watch-relay.dev/log-interval-ms";

const timestamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

async function simCall(sim: Sim, method: string, path: string, body?: unknown, type = "application/json"): Promise<any> {
  const response = await fetch(sim.url + path, { method, headers: { "content-type": type }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** A scheduled pod whose containers run since `startedAgoMs` ago, each writing a line every `intervalMs`. */
export function runningPod(sim: Sim, namespace: string, name: string, { containers = ["main"], startedAgoMs = 2000, intervalMs = 20 } = {}): Promise<KubeObject> {
  const startedAt = timestamp(Date.now() - startedAgoMs);
  return simCall(sim, "POST", `/api/v1/namespaces/${namespace}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, annotations: { [LOG_INTERVAL_ANNOTATION]: String(intervalMs) } },
    spec: { nodeName: "node-1", containers: containers.map((c) => ({ name: c, image: "busybox:1.36" })) },
    status: {
      phase: "Running",
      containerStatuses: containers.map((c) => ({
        name: c,
        state: { running: { startedAt } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: "busybox:1.36",
        imageID: "",
        containerID: `containerd://${namespace}-${name}-${c}`,
        started: true,
      })),
    },
  });
}

/** The container stopped and was started again: its log so far becomes its previous one. */
export async function restartContainer(sim: Sim, namespace: string, name: string, container = "main"): Promise<void> {
  const pod = await simCall(sim, "GET", `/api/v1/namespaces/${namespace}/pods/${name}`);
  const at = timestamp(Date.now());
  const statuses = pod.status.containerStatuses.map((s: any) =>
    s.name !== container
      ? s
      : {
          ...s,
          lastState: { terminated: { exitCode: 1, reason: "Error", startedAt: s.state.running.startedAt, finishedAt: at, containerID: s.containerID } },
          state: { running: { startedAt: at } },
          restartCount: s.restartCount + 1,
          containerID: `${s.containerID}-${s.restartCount + 1}`,
        },
  );
  await simCall(sim, "PATCH", `/api/v1/namespaces/${namespace}/pods/${name}`, { status: { containerStatuses: statuses } }, "application/merge-patch+json");
}

/** A log as the simulated API server itself answers it. */
export async function simLog(sim: Sim, pathAndQuery: string): Promise<string> {
  const response = await fetch(sim.url + pathAndQuery);
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${pathAndQuery}: ${response.status} ${text}`);
  return text;
}

/** Its lines, each with its newline. */
export const linesOf = (text: string): string[] => text.match(/[^\n]*\n|[^\n]+$/g) ?? [];

/** A follower of a log: every byte it was sent, awaited as it arrives, and how its stream ended. */
export class LogFollower {
  readonly #chunks: Uint8Array[] = [];
  readonly #changes = new Changes();
  #ended: { code?: number; reason?: string; error?: unknown } | undefined;
  /** Messages received (a WebSocket's), in order. */
  readonly messages: Array<string | ArrayBuffer> = [];
  close: () => void = () => undefined;

  /** What it was sent so far, as text. */
  get text(): string {
    return new TextDecoder().decode(this.bytes);
  }

  get bytes(): Uint8Array {
    const out = new Uint8Array(this.#chunks.reduce((n, c) => n + c.length, 0));
    let offset = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }

  get lines(): string[] {
    return linesOf(this.text);
  }

  get ended(): { code?: number; reason?: string; error?: unknown } | undefined {
    return this.#ended;
  }

  /** Once `done()` holds (looked at as bytes arrive and when the stream ends). */
  until(what: string, done: (follower: LogFollower) => boolean): Promise<void> {
    return this.#changes.until(what, () => done(this));
  }

  /** Once the stream has ended. */
  async end(): Promise<{ code?: number; reason?: string; error?: unknown }> {
    await this.until("the log stream to end", (f) => f.ended !== undefined);
    return this.#ended!;
  }

  /** @internal */
  received(bytes: Uint8Array): void {
    this.#chunks.push(bytes);
    this.#changes.changed();
  }

  /** @internal */
  finished(ending: { code?: number; reason?: string; error?: unknown }): void {
    this.#ended ??= ending;
    this.#changes.changed();
  }
}

/** Follow `path` (with its query) over HTTP through the relay: the response, and its bytes as they come. */
export async function followHttp(path: string, headers: Record<string, string> = {}): Promise<LogFollower & { response: Response }> {
  const response = await relay(path, { headers });
  if (response.status !== 200 || !response.body) throw new Error(`expected a log stream, got ${response.status}: ${await response.text()}`);
  const follower = Object.assign(new LogFollower(), { response });
  const reader = response.body.getReader();
  follower.close = () => void reader.cancel().catch(() => undefined);
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        follower.received(value);
      }
      follower.finished({});
    } catch (error) {
      follower.finished({ error });
    }
  })();
  return follower;
}

/** Follow `path` over a WebSocket through the relay, offering `protocols`. */
export async function followSocket(path: string, protocols: string[] = ["binary.k8s.io"]): Promise<LogFollower & { socket: WebSocket; protocol: string | null }> {
  const response = await relay(path, { headers: { upgrade: "websocket", ...(protocols.length > 0 ? { "sec-websocket-protocol": protocols.join(", ") } : {}) } });
  const socket = response.webSocket;
  if (!socket) throw new Error(`expected a WebSocket upgrade, got ${response.status}: ${await response.text()}`);
  // A binary message is a Blob by default, as in a browser.
  socket.binaryType = "arraybuffer";
  socket.accept();
  const follower = Object.assign(new LogFollower(), { socket, protocol: response.headers.get("sec-websocket-protocol") });
  follower.close = () => socket.close(1000, "test done");
  socket.addEventListener("message", (event) => {
    follower.messages.push(event.data as string | ArrayBuffer);
    follower.received(logBytes(event.data as string | ArrayBuffer));
  });
  socket.addEventListener("close", (event) => follower.finished({ code: event.code, reason: event.reason }));
  return follower;
}
