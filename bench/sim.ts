/**
 * @module
 * The orchestrator's handle on the simulated API server: its `/_sim/` API (where upstream
 * connections and requests are counted), and the host's IPC operations.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { PROBE_LABEL } from "../src/hub/probe.ts";
import type { FaultRequest, LoggedRequest, SimConfig, SimStats } from "../src/sim/index.ts";
import { startChild, type Child } from "./children.ts";
import type { SimArgs } from "./hosts/sim.ts";

const PROBE_SELECTOR = `!${PROBE_LABEL},${PROBE_LABEL}`;

export class Sim {
  readonly url: string;
  readonly pid: number;
  readonly #child: Child<{ url: string; pid: number }>;

  private constructor(child: Child<{ url: string; pid: number }>) {
    this.#child = child;
    this.url = child.info.url;
    this.pid = child.info.pid;
  }

  static async start(args: SimArgs, logDir: string, name = "sim"): Promise<Sim> {
    return new Sim(await startChild(name, new URL("./hosts/sim.ts", import.meta.url), args, logDir));
  }

  stop(): Promise<void> {
    return this.#child.stop();
  }

  /** Patient, and retried: a simulator writing to many watchers behind can take seconds to answer. */
  async #json<T>(path: string, body?: unknown): Promise<T> {
    const init = body === undefined ? {} : { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } };
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await fetch(`${this.url}${path}`, { ...init, signal: AbortSignal.timeout(60_000) });
        if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
        return (await response.json()) as T;
      } catch (e) {
        if (attempt >= 3 || !this.#child.running) throw new Error(`simulator ${path}: ${(e as Error).message}${this.#child.running ? "" : `; it exited:\n${this.#child.tail()}`}`);
        await sleep(500);
      }
    }
  }

  stats(): Promise<SimStats> {
    return this.#json("/_sim/stats");
  }

  async resourceVersion(): Promise<number> {
    return Number((await this.stats()).resourceVersion);
  }

  /** Open watches on one namespace: a system's upstream connections, not a relay's probe (may linger). */
  async watchesIn(namespace: string): Promise<number> {
    return (await this.stats()).activeWatches.filter((w) => w.path.startsWith(`/api/v1/namespaces/${namespace}/`) && w.labelSelector !== PROBE_SELECTOR).length;
  }

  async requestSeq(): Promise<number> {
    return (await this.#json<{ next: number }>(`/_sim/requests?since=${Number.MAX_SAFE_INTEGER}`)).next;
  }

  async requestsSince(seq: number, namespace: string): Promise<LoggedRequest[]> {
    return (await this.#json<{ requests: LoggedRequest[] }>(`/_sim/requests?since=${seq}&path=${encodeURIComponent(`/api/v1/namespaces/${namespace}/`)}`)).requests;
  }

  async faults(request: FaultRequest): Promise<void> {
    await this.#json("/_sim/faults", request);
  }

  async configure(config: Partial<SimConfig>): Promise<void> {
    await this.#json("/_sim/config", config);
  }

  /** `ratePerSec` changes a second on `namespace`'s pods; 0 stops. */
  async churn(ratePerSec: number, namespace?: string): Promise<void> {
    await this.#json("/_sim/churn", { ratePerSec, ...(namespace ? { namespaces: [namespace] } : {}) });
  }

  /** Exactly `ops` changes on `namespace` now; the resourceVersion after them. */
  step(namespace: string, ops: number): Promise<number> {
    return this.#child.call("step", { namespace, ops });
  }

  /** A merge patch of one pod, as a client writes it. */
  async patch(namespace: string, name: string, patch: unknown): Promise<void> {
    const response = await fetch(`${this.url}/api/v1/namespaces/${namespace}/pods/${name}`, {
      method: "PATCH",
      body: JSON.stringify(patch),
      headers: { "content-type": "application/merge-patch+json" },
    });
    if (!response.ok) throw new Error(`simulator: PATCH pod ${namespace}/${name}: ${response.status} ${await response.text()}`);
    await response.body?.cancel();
  }

  heapBytes(): Promise<number> {
    return this.#child.call("heap");
  }

  count(namespace: string): Promise<number> {
    return this.#child.call("count", { namespace });
  }

  /** Grow `namespace` to `count` pods, the new ones with `annotations`; how many it has. */
  populate(namespace: string, count: number, annotations?: Record<string, string>): Promise<number> {
    return this.#child.call("populate", { namespace, count, annotations });
  }
}
