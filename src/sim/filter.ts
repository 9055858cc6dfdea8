/**
 * @module
 * Which objects a list or watch request sees: its namespace scope plus label and field
 * selectors, parsed and validated with the shared selector modules. Bad selectors become the
 * API server's 400 before any object is read.
 */
import { fieldsOf, matchesFields, parseFieldSelector, validateFieldSelector } from "../k8s/fields.ts";
import { matchesLabels, parseLabelSelector, SelectorError } from "../k8s/labels.ts";
import { badRequest } from "../k8s/status.ts";
import type { KubeObject } from "../k8s/types.ts";
import { ApiError } from "./errors.ts";
import type { ResourceDef } from "./resources.ts";

export interface ObjectFilter {
  /** The selectors as the client sent them (`""` when absent), for stats and logs. */
  readonly labelSelector: string;
  readonly fieldSelector: string;
  /** Whether any selector was given (lists then omit `remainingItemCount`). */
  readonly selective: boolean;
  /** The namespace a request is scoped to (its objects' keys are `<namespace>/<name>`); `undefined` for every namespace. */
  readonly namespace: string | undefined;
  matches(object: KubeObject): boolean;
}

export function requestFilter(def: ResourceDef, namespace: string | undefined, query: URLSearchParams): ObjectFilter {
  const labelSelector = query.get("labelSelector") ?? "";
  const fieldSelector = query.get("fieldSelector") ?? "";
  try {
    const labels = parseLabelSelector(labelSelector);
    const fields = validateFieldSelector(parseFieldSelector(fieldSelector), def.group, def.resource, def.namespaced);
    const hasLabels = labelSelector.trim() !== "";
    const hasFields = fieldSelector.trim() !== "";
    return {
      labelSelector,
      fieldSelector,
      selective: hasLabels || hasFields,
      namespace,
      matches(object) {
        if (namespace !== undefined && object.metadata?.namespace !== namespace) return false;
        if (hasLabels && !matchesLabels(labels, object.metadata?.labels)) return false;
        return !hasFields || matchesFields(fields, fieldsOf(def.group, def.resource, object));
      },
    };
  } catch (e) {
    if (e instanceof SelectorError) throw new ApiError(badRequest(e.message));
    throw e;
  }
}
