/**
 * @module
 * The scale subresource of Deployments and ReplicaSets (`.../deployments/web/scale`), which
 * `kubectl scale` reads and writes: an `autoscaling/v1` `Scale` made from the object (its
 * `spec.replicas`, its current `status.replicas` and label selector), and writes to it that
 * become writes of the object's `spec.replicas` (so the object's resourceVersion is the
 * Scale's, and a stale one is a 409 as on the object).
 */
import { badRequest } from "../k8s/status.ts";
import type { KubeObject } from "../k8s/types.ts";
import { ApiError, invalid } from "./errors.ts";
import { isJsonObject } from "./meta.ts";
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.ts";
import type { ResourceDef } from "./resources.ts";
import { kindSchema } from "./schemas.ts";
import type { PatchType, Writes } from "./writes.ts";

const SCALE = { group: "autoscaling", version: "v1", kind: "Scale" };

/** `app=web,tier=front`: a label selector's matchLabels as the Scale's status writes it. */
function selectorString(object: KubeObject): string {
  const selector = (object.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector;
  return Object.entries(selector?.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

export function scaleOf(object: KubeObject): KubeObject {
  const meta = object.metadata ?? {};
  const spec = (object.spec ?? {}) as { replicas?: number };
  const status = (object.status ?? {}) as { replicas?: number };
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: { name: meta.name, namespace: meta.namespace, uid: meta.uid, resourceVersion: meta.resourceVersion, creationTimestamp: meta.creationTimestamp },
    spec: { replicas: spec.replicas ?? 1 },
    status: { replicas: status.replicas ?? 0, selector: selectorString(object) },
  };
}

/** Write a Scale (from a PUT, or the current one patched): the object's `spec.replicas`, under the Scale's resourceVersion. */
function writeScale(writes: Writes, def: ResourceDef, object: KubeObject, scale: unknown): KubeObject {
  if (!isJsonObject(scale) || (scale.kind !== undefined && scale.kind !== "Scale")) throw new ApiError(badRequest("the body of a scale request must be an autoscaling/v1 Scale"));
  const replicas = (scale.spec as { replicas?: unknown } | undefined)?.replicas;
  const name = object.metadata?.name ?? "";
  if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0) {
    throw new ApiError(invalid("Scale", SCALE.group, name, "spec.replicas", "FieldValueInvalid", `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`));
  }
  const resourceVersion = (scale.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
  const body = { ...object, metadata: { ...object.metadata, resourceVersion: typeof resourceVersion === "string" ? resourceVersion : undefined }, spec: { ...(object.spec as object), replicas } };
  return scaleOf(writes.replace(def, object.metadata?.namespace, name, body));
}

export const replaceScale = (writes: Writes, def: ResourceDef, object: KubeObject, body: unknown): KubeObject => writeScale(writes, def, object, body);

export function patchScale(writes: Writes, def: ResourceDef, object: KubeObject, type: PatchType, patch: unknown): KubeObject {
  const current = scaleOf(object);
  const patched = type === "json" ? jsonPatch(current, patch) : type === "strategic" ? strategicMergePatch(current, patch, kindSchema(SCALE)) : mergePatch(current, patch);
  return writeScale(writes, def, object, patched);
}
