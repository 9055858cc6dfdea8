/**
 * @module
 * Whether a resource is namespaced, for the built-in resources a relay is most asked for.
 * It decides whether `/namespaces/{ns}/` is allowed and which field labels exist.
 */

const CLUSTER_SCOPED: Record<string, readonly string[]> = {
  "": ["nodes", "namespaces", "persistentvolumes", "componentstatuses"],
  "rbac.authorization.k8s.io": ["clusterroles", "clusterrolebindings"],
  "storage.k8s.io": ["storageclasses", "csidrivers", "csinodes", "volumeattachments"],
  "apiextensions.k8s.io": ["customresourcedefinitions"],
  "apiregistration.k8s.io": ["apiservices"],
  "admissionregistration.k8s.io": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations", "validatingadmissionpolicies", "validatingadmissionpolicybindings"],
  "scheduling.k8s.io": ["priorityclasses"],
  "networking.k8s.io": ["ingressclasses"],
  "node.k8s.io": ["runtimeclasses"],
  "certificates.k8s.io": ["certificatesigningrequests"],
  "flowcontrol.apiserver.k8s.io": ["flowschemas", "prioritylevelconfigurations"],
};

export function isNamespaced(group: string, resource: string): boolean {
  return !(CLUSTER_SCOPED[group]?.includes(resource) ?? false);
}
