/**
 * @module
 * How the client keys objects: as client-go's informers do.
 */
import { metaNamespaceKey } from "../k8s/key.ts";
import type { KubeResource } from "./types.ts";

/** The map key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(object: KubeResource): string {
  const { namespace, name = "" } = object.metadata ?? {};
  return metaNamespaceKey(namespace, name);
}
