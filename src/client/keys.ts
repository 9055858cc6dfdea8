/**
 * @module
 * How the client keys objects: as client-go's informers do.
 */
import { metaNamespaceKey } from "../k8s/key.ts";
import { CLUSTER_ANNOTATION, NAME_ANNOTATION } from "../k8s/members.ts";
import type { KubeResource } from "./types.ts";

/** The map key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(object: KubeResource): string {
  const { namespace, name = "" } = object.metadata ?? {};
  return metaNamespaceKey(namespace, name);
}

/**
 * Which cluster an object of a merged key (`/clusters/a,b/…`, `/clusters/*`/…) comes from, and
 * its own name there (a merged key names it `<cluster>:<name>`); `undefined` for one cluster's object.
 */
export function clusterOf(object: KubeResource): { cluster: string; name: string } | undefined {
  const annotations = object.metadata?.annotations;
  const cluster = annotations?.[CLUSTER_ANNOTATION];
  return cluster === undefined ? undefined : { cluster, name: annotations?.[NAME_ANNOTATION] ?? "" };
}
