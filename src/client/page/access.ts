/**
 * @module
 * What the page's token may read, from the relay's `/_relay/access`: where the page opens, which
 * namespaces it offers, which side watches it starts. A relay that needs a token and got none (or
 * refused the one given) answers 401, and the page says how to give one instead of failing watch
 * after watch.
 */
import type { Status } from "../../k8s/types.ts";
import { authorization } from "../transport.ts";
import { DEFAULT_CLUSTER } from "../../k8s/key.ts";
import { ALL_CLUSTERS } from "../../k8s/members.ts";
import type { Resource } from "./resources.ts";

/** What the page reads of the relay's `AccessSummary` (the client shares only `k8s` with the relay's code). */
interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
}

interface Summary {
  status: { clusterRules: ResourceRule[]; namespaces: Array<{ name: string; resourceRules: ResourceRule[] }> };
}

/** A collection as the rules name it. */
export type Collection = Pick<Resource, "group" | "id">;

const covers = (values: readonly string[], value: string): boolean => values.includes("*") || values.includes(value);
/** A watch of a collection lists and watches it. */
const mayWatch = (rules: readonly ResourceRule[], { group, id }: Collection): boolean =>
  rules.some((r) => covers(r.apiGroups, group) && covers(r.resources, id) && ["list", "watch"].every((verb) => covers(r.verbs, verb)));

export class Access {
  readonly #summary: Summary | undefined;

  /** `summary` undefined: the relay did not say (an older relay), so everything is tried. */
  constructor(summary: Summary | undefined) {
    this.#summary = summary;
  }

  /** May watch `collection` across all namespaces (or, cluster-scoped, at all). */
  everywhere(collection: Collection): boolean {
    return this.#summary === undefined || mayWatch(this.#summary.status.clusterRules, collection);
  }

  /** The namespaces where it may watch `collection` although not everywhere, by name. */
  namespacesFor(collection: Collection): string[] {
    return (this.#summary?.status.namespaces ?? []).filter((n) => mayWatch(n.resourceRules, collection)).map((n) => n.name);
  }

  /** Every namespace the token has rules of its own in. */
  get namespaces(): string[] {
    return (this.#summary?.status.namespaces ?? []).map((n) => n.name);
  }

  /** Where to open `collection` when the address names no namespace: everywhere if it may, else its first namespace that allows it. */
  openingNamespace(collection: Collection): string {
    if (this.everywhere(collection)) return "";
    return this.namespacesFor(collection)[0] ?? this.namespaces[0] ?? "";
  }
}

/**
 * The relay's answer about `cluster`: what the token may read, or the 401 that says a token is
 * needed (or refused). Every cluster as one (`*`), as the default cluster's: the relay applies
 * the token's rules to each member alike.
 */
export async function readAccess(token: string | undefined, cluster = DEFAULT_CLUSTER): Promise<Access | { unauthorized: Status }> {
  let response: Response;
  try {
    response = await fetch(cluster === DEFAULT_CLUSTER || cluster === ALL_CLUSTERS ? "/_relay/access" : `/_relay/access/clusters/${encodeURIComponent(cluster)}`, {
      cache: "no-store",
      headers: authorization(token),
    });
  } catch {
    return new Access(undefined);
  }
  if (response.status === 401) return { unauthorized: (await response.json().catch(() => ({}))) as Status };
  if (!response.ok) {
    await response.body?.cancel();
    return new Access(undefined);
  }
  return new Access((await response.json()) as Summary);
}

/** What to tell a reader the relay refused: how to give the page a token. */
export function tokenNeeded(origin: string, refused: Status, given: boolean): string {
  const why = refused.message ?? "401 Unauthorized";
  const how = `open ${origin}/#token=<token> (a token of the relay's: \`npm run -s token\` prints one, in jwt mode; a Kubernetes token, in kube mode). The page keeps it for this tab only and takes it out of the address at once`;
  return given ? `The relay refused the token this tab has (${why}): ${how}.` : `This relay needs a token (${why}): ${how}.`;
}
