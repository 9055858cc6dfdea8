/**
 * @module
 * The ConfigMaps the suite writes, only when told it may (`--allow-writes`, in `--namespace`),
 * through the server under test or the one given to write through (`--writer-server`: a relay's
 * upstream). Each check's objects carry the suite's label and the check's, so each check watches
 * a selector only its own writes move, whatever else happens in the namespace. Names and labels
 * are the same from run to run, so a relay in front keeps one hub per check across runs; what a
 * run leaves behind is deleted before the next starts.
 */
import type { KubeObject } from "../src/k8s/types.ts";
import { configMaps, itemPath, pathOf } from "./collection.ts";
import type { Api, Reply } from "./http.ts";
import { describe } from "./reads.ts";

export const SUITE_LABEL = "conformance.kube-watch-relay.dev/suite";
export const CHECK_LABEL = "conformance.kube-watch-relay.dev/check";

export type Labels = Record<string, string>;

/** One check's objects. */
export class Objects {
  readonly #writer: Api;
  readonly #namespace: string;
  readonly #check: string;

  constructor(writer: Api, namespace: string, check: string) {
    this.#writer = writer;
    this.#namespace = namespace;
    this.#check = check;
  }

  /** The label selector of this check's objects (more terms may follow, comma-separated). */
  get selector(): string {
    return `${SUITE_LABEL}=true,${CHECK_LABEL}=${this.#check}`;
  }

  name(suffix: string): string {
    return `conformance-${this.#check}-${suffix}`;
  }

  /** A ConfigMap of this check, with its labels and `labels` beside them. */
  async create(suffix: string, labels: Labels = {}): Promise<KubeObject> {
    const body = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: this.name(suffix), labels: { [SUITE_LABEL]: "true", [CHECK_LABEL]: this.#check, ...labels } }, data: { step: "0" } };
    return written(await this.#writer.request("POST", pathOf(configMaps(this.#namespace)), { body }), `create ConfigMap ${this.name(suffix)}`);
  }

  /** A change: new data (so every update is a new resourceVersion), and labels set (`null` removes one). */
  async update(suffix: string, labels: Record<string, string | null> = {}): Promise<KubeObject> {
    const body = { metadata: { labels }, data: { step: String(Date.now()) } };
    const reply = await this.#writer.request("PATCH", itemPath(configMaps(this.#namespace), this.#namespace, this.name(suffix)), { body, contentType: "application/merge-patch+json" });
    return written(reply, `update ConfigMap ${this.name(suffix)}`);
  }

  async remove(suffix: string): Promise<void> {
    const reply = await this.#writer.request("DELETE", itemPath(configMaps(this.#namespace), this.#namespace, this.name(suffix)));
    written(reply, `delete ConfigMap ${this.name(suffix)}`);
  }
}

function written(reply: Reply, what: string): KubeObject {
  if (reply.status < 200 || reply.status > 299 || typeof reply.json !== "object" || reply.json === null) {
    throw new Error(`could not ${what} through the writer: ${describe(reply)}`);
  }
  return reply.json as KubeObject;
}

/** Delete what an earlier run left (it stopped before cleaning up); returns how many. */
export async function removeLeftovers(writer: Api, namespace: string): Promise<number> {
  const collection = configMaps(namespace);
  const reply = await writer.get(pathOf(collection), { labelSelector: `${SUITE_LABEL}=true` });
  const items = (reply.json as { items?: KubeObject[] } | undefined)?.items;
  if (reply.status !== 200 || !Array.isArray(items)) throw new Error(`could not list the suite's ConfigMaps in ${namespace} through the writer: ${describe(reply)}`);
  for (const item of items) {
    const name = item.metadata?.name ?? "";
    const deleted = await writer.request("DELETE", itemPath(collection, namespace, name));
    if (deleted.status !== 200 && deleted.status !== 202 && deleted.status !== 404) throw new Error(`could not delete ConfigMap ${name} through the writer: ${describe(deleted)}`);
  }
  return items.length;
}
