/**
 * @module
 * The page's clusters: which there are (the relay's `/_relay/clusters`, names only), the picker
 * that offers each and "All clusters" (the merged key `/clusters/*`) where there are more than
 * one, and the prefix a picked cluster puts before a collection's path. The default cluster's
 * paths have none, so a page of one cluster asks for what it always did.
 */
import { DEFAULT_CLUSTER } from "../../k8s/key.ts";
import { ALL_CLUSTERS } from "../../k8s/members.ts";
import { authorization } from "../transport.ts";

/** The relay's configured clusters, by name; none known (an older relay, a refusal) is the default cluster alone. */
export async function readClusters(token: string | undefined): Promise<string[]> {
  try {
    const response = await fetch("/_relay/clusters", { cache: "no-store", headers: authorization(token) });
    if (response.ok) return ((await response.json()) as { names: string[] }).names;
    await response.body?.cancel();
  } catch {
    // unreachable: as an older relay
  }
  return [DEFAULT_CLUSTER];
}

/** Before a collection's path: `/clusters/east`, `/clusters/*`; nothing for the default cluster. */
export const clusterPrefix = (cluster: string): string => (cluster === DEFAULT_CLUSTER ? "" : `/clusters/${cluster === ALL_CLUSTERS ? ALL_CLUSTERS : encodeURIComponent(cluster)}`);

/** Fill the picker (each cluster by name, then "All clusters") and show it, if there is more than one cluster to pick. */
export function offerClusters(picker: HTMLSelectElement, names: readonly string[], picked: string): void {
  if (names.length < 2) return;
  picker.replaceChildren(...names.map((name) => new Option(name, name)), new Option("All clusters", ALL_CLUSTERS));
  // A shared link's cluster, whatever this relay has.
  if (![...picker.options].some((o) => o.value === picked)) picker.add(new Option(picked, picked));
  picker.value = picked;
  (picker.closest("label") ?? picker).hidden = false;
}
