/**
 * @module
 * The relay's own resources, for rights that are the relay's rather than the cluster's: its
 * metrics and its hub index. They live in the API group `relay.kube-watch-relay.dev`, so an
 * operator is granted them as any other right: by a JWT rule naming the group (`jwt` mode), or
 * by an RBAC rule the cluster's SelfSubjectAccessReview checks (`kube` mode; RBAC takes rules
 * for resources no API server serves). They are cluster-wide and decided on the default
 * cluster: a JWT rule needs `namespaces: ["*"]` and to cover the default cluster.
 */
import { DEFAULT_CLUSTER } from "../k8s/key.ts";
import type { Access } from "./access.ts";

export const RELAY_GROUP = "relay.kube-watch-relay.dev";

/** `get metrics`: read `/metrics`. */
export const READ_METRICS: Access = { cluster: DEFAULT_CLUSTER, verb: "get", group: RELAY_GROUP, resource: "metrics", namespace: undefined };

/** `list hubs`: read the hub index, `/_relay/hubs`. */
export const LIST_HUBS: Access = { cluster: DEFAULT_CLUSTER, verb: "list", group: RELAY_GROUP, resource: "hubs", namespace: undefined };
