/**
 * @module
 * A pod's log, followed over the page's relay socket (`relaySocket().logs()`): the last lines,
 * then each as it is written, until the container stops (the relay says so) or another pod is
 * picked. Every tab following the same container shares the relay's one upstream stream of it.
 */
import { DEFAULT_CLUSTER } from "../../k8s/key.ts";
import type { RelaySocket } from "../index.ts";
import { clusterPrefix } from "./clusters.ts";

/** Lines kept on screen: a followed log is endless. */
const MAX_LINES = 500;
/** Lines asked for first. */
const TAIL_LINES = 100;

export class PodLogPanel {
  readonly #panel: HTMLElement;
  readonly #title: HTMLElement;
  readonly #state: HTMLElement;
  readonly #text: HTMLPreElement;
  readonly #relay: RelaySocket;
  /** The log being followed: stopping it ends its loop. */
  #following: AsyncGenerator<string, unknown> | undefined;

  constructor(panel: HTMLElement, relay: RelaySocket) {
    this.#panel = panel;
    this.#relay = relay;
    this.#title = panel.querySelector(".pod") as HTMLElement;
    this.#state = panel.querySelector(".state") as HTMLElement;
    this.#text = panel.querySelector("pre") as HTMLPreElement;
    (panel.querySelector("button") as HTMLButtonElement).addEventListener("click", () => this.stop());
  }

  /** Follow `container` of pod `namespace/name` of `cluster`, instead of whatever was followed. */
  follow(namespace: string, name: string, container: string | undefined, cluster = DEFAULT_CLUSTER): void {
    this.stop();
    this.#panel.hidden = false;
    this.#title.textContent = `${cluster === DEFAULT_CLUSTER ? "" : `${cluster} · `}${namespace}/${name}${container ? ` · ${container}` : ""}`;
    this.#text.textContent = "";
    this.#show("live", "following…");
    const logs = this.#relay.logs(`${clusterPrefix(cluster)}/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/log`, {
      tailLines: TAIL_LINES,
      ...(container ? { container } : {}),
    });
    this.#following = logs;
    void (async () => {
      try {
        for (;;) {
          const next = await logs.next();
          if (this.#following !== logs) return;
          if (next.done) return this.#show("ended", `ended: ${(next.value as { reason?: string }).reason ?? "the log ended"}`);
          this.#append(next.value);
        }
      } catch (e) {
        if (this.#following === logs) this.#show("failed", (e as Error).message);
      }
    })();
  }

  stop(): void {
    const following = this.#following;
    this.#following = undefined;
    void following?.return(undefined);
    this.#panel.hidden = true;
  }

  #append(text: string): void {
    const pinned = this.#text.scrollTop + this.#text.clientHeight >= this.#text.scrollHeight - 4;
    this.#text.append(text);
    // Keep the last lines only: merge the text nodes now and then and cut the oldest.
    if (this.#text.childNodes.length > 64) {
      const lines = (this.#text.textContent ?? "").split("\n");
      this.#text.textContent = lines.slice(-MAX_LINES - 1).join("\n");
    }
    if (pinned) this.#text.scrollTop = this.#text.scrollHeight;
  }

  #show(state: "live" | "ended" | "failed", text: string): void {
    this.#state.dataset.state = state;
    this.#state.textContent = text;
  }
}
