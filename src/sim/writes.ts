/**
 * @module
 * Writes with the API server's rules: create (409 AlreadyExists), replace (409 Conflict on a
 * stale resourceVersion), patch, delete, with server-set uid and creationTimestamp. Tests,
 * kubectl and churn all write through here so every change reaches the store the same way.
 */
import { isDnsSubdomain } from "../k8s/path.ts";
import { badRequest, notFound } from "../k8s/status.ts";
import type { KubeObject } from "../k8s/types.ts";
import { alreadyExists, ApiError, conflict, invalid } from "./errors.ts";
import { namespaceObject } from "./fixtures.ts";
import { acceptBody, isJsonObject, timestamp } from "./meta.ts";
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.ts";
import { NAME_ALPHABET, type Random } from "./random.ts";
import { apiVersionOfResource, RESOURCES, resourceByName, type ResourceDef } from "./resources.ts";
import { kindSchema } from "./schemas.ts";
import { validateFields, type FieldValidation } from "./validation.ts";
import { metaNamespaceKey } from "../k8s/key.ts";
import type { Store } from "./store.ts";
import { isDeepStrictEqual } from "node:util";

/** What a request asks of a write beyond its body: field validation, whose warnings are collected in `warnings`. */
export interface WriteOptions {
  fieldValidation?: FieldValidation;
  warnings?: string[];
}

/** What happens to the objects a deleted one owns (`DeleteOptions.propagationPolicy`). */
export type Propagation = "Background" | "Foreground" | "Orphan";

/** PATCH Content-Types the simulator reads (custom resources take no strategic merge patch, as on the API server). */
export const PATCH_TYPES = {
  "application/json-patch+json": "json",
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
} as const;

export type PatchType = (typeof PATCH_TYPES)[keyof typeof PATCH_TYPES];

const NAMESPACES = resourceByName("namespaces");
const PODS = resourceByName("pods");
const SECRETS = resourceByName("secrets");

const SUBDOMAIN_HELP =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** What the registry strategies fill in on create: a STATUS for new pods and namespaces, a Secret's type. */
function withCreateDefaults(def: ResourceDef, object: KubeObject): KubeObject {
  if (def === NAMESPACES) {
    const name = object.metadata?.name ?? "";
    const labels = { ...object.metadata?.labels, "kubernetes.io/metadata.name": name };
    return { ...object, metadata: { ...object.metadata, labels }, spec: object.spec ?? { finalizers: ["kubernetes"] }, status: { phase: "Active" } };
  }
  if (def === PODS && object.status === undefined) return { ...object, status: { phase: "Pending", qosClass: "BestEffort" } };
  if (def === SECRETS && !object.type) return { ...object, type: "Opaque" };
  return object;
}

/** Kinds whose metadata.generation counts changes to their spec (workloads and custom resources). */
const hasGeneration = (def: ResourceDef): boolean => def.group === "apps" || def.custom;

/** Kinds that own others here: a Deployment its ReplicaSets, a ReplicaSet its Pods. */
const OWNERS: Record<string, ResourceDef> = { Deployment: resourceByName("replicasets"), ReplicaSet: PODS };

export class Writes {
  readonly #store: Store;
  readonly #rng: Random;

  constructor(store: Store, rng: Random) {
    this.#store = store;
    this.#rng = rng;
  }

  /** Check a request body against the URL it was sent to; returns it with kind/apiVersion filled in. */
  #accept(def: ResourceDef, namespace: string | undefined, body: unknown): KubeObject {
    const apiVersion = apiVersionOfResource(def);
    const object = acceptBody(body, apiVersion, def.kind);
    const metadata = { ...(isJsonObject(object.metadata) ? object.metadata : {}) };
    if (def.namespaced) {
      if (metadata.namespace !== undefined && metadata.namespace !== "" && metadata.namespace !== namespace) {
        throw new ApiError(badRequest("the namespace of the provided object does not match the namespace sent on the request"));
      }
      metadata.namespace = namespace;
    } else {
      delete metadata.namespace;
    }
    return { ...object, kind: def.kind, apiVersion, metadata };
  }

  #existing(def: ResourceDef, namespace: string | undefined, name: string): KubeObject {
    const current = this.#store.get(def, metaNamespaceKey(namespace, name));
    if (!current) throw new ApiError(notFound(def.resource, name, def.group));
    return current;
  }

  create(def: ResourceDef, namespace: string | undefined, body: unknown, options: WriteOptions = {}): KubeObject {
    const object = this.#accept(def, namespace, body);
    this.#validate(def, object, options);
    const meta = object.metadata ?? {};
    const name = meta.name || (meta.generateName ? meta.generateName + this.#rng.string(NAME_ALPHABET, 5) : "");
    if (!name) throw new ApiError(invalid(def.kind, def.group, "", "metadata.name", "FieldValueRequired", "Required value: name or generateName is required"));
    if (!isDnsSubdomain(name)) throw new ApiError(invalid(def.kind, def.group, name, "metadata.name", "FieldValueInvalid", `Invalid value: "${name}": ${SUBDOMAIN_HELP}`));
    const key = metaNamespaceKey(meta.namespace, name);
    if (this.#store.get(def, key)) throw new ApiError(alreadyExists(def.resource, def.group, name));
    if (meta.namespace) this.ensureNamespace(meta.namespace);
    // Server-owned fields; the store stamps resourceVersion.
    object.metadata = { ...meta, name, uid: this.#rng.uuid(), creationTimestamp: timestamp(Date.now()), deletionTimestamp: undefined, ...(hasGeneration(def) ? { generation: 1 } : {}) };
    return this.#store.put(def, key, withCreateDefaults(def, object)).object;
  }

  replace(def: ResourceDef, namespace: string | undefined, name: string, body: unknown, options: WriteOptions = {}): KubeObject {
    const object = this.#accept(def, namespace, body);
    this.#validate(def, object, options);
    const meta = object.metadata ?? {};
    if (meta.name !== undefined && meta.name !== name) {
      throw new ApiError(badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`));
    }
    return this.#update(def, namespace, name, object);
  }

  patch(def: ResourceDef, namespace: string | undefined, name: string, type: PatchType, patch: unknown, options: WriteOptions = {}): KubeObject {
    const current = this.#existing(def, namespace, name);
    const patched = type === "json" ? jsonPatch(current, patch) : type === "strategic" ? strategicMergePatch(current, patch, kindSchema(def)) : mergePatch(current, patch);
    const object = this.#accept(def, namespace, patched);
    this.#validate(def, object, options);
    return this.#update(def, namespace, name, object);
  }

  #validate(def: ResourceDef, object: KubeObject, options: WriteOptions): void {
    const warnings = validateFields(object, kindSchema(def), options.fieldValidation ?? "Ignore");
    options.warnings?.push(...warnings);
  }

  /** Shared by replace and patch: optimistic concurrency, then keep what the server owns. */
  #update(def: ResourceDef, namespace: string | undefined, name: string, object: KubeObject): KubeObject {
    const current = this.#existing(def, namespace, name);
    const meta = object.metadata ?? {};
    // A resourceVersion in the body is a precondition; leaving it out is an unconditional update.
    if (meta.resourceVersion && meta.resourceVersion !== current.metadata?.resourceVersion) {
      throw new ApiError(conflict(def.resource, def.group, name));
    }
    const owned = current.metadata ?? {};
    // A change to what the object asks for (anything but metadata and status) is a new generation, which controllers observe.
    const generation = hasGeneration(def) ? (owned.generation ?? 1) + (isDeepStrictEqual(object.spec, current.spec) ? 0 : 1) : meta.generation;
    object.metadata = { ...meta, name, uid: owned.uid, creationTimestamp: owned.creationTimestamp, deletionTimestamp: owned.deletionTimestamp, generation };
    return this.#store.put(def, metaNamespaceKey(namespace, name), object).object;
  }

  /**
   * Immediate delete (no graceful period); deleting a namespace deletes what is in it first. What
   * the object owns (a Deployment's ReplicaSets, their Pods) is deleted right after it, as the
   * garbage collector does in the background, or, with `Orphan`, keeps going without the owner.
   */
  remove(def: ResourceDef, namespace: string | undefined, name: string, propagation: Propagation = "Background"): KubeObject {
    const last = this.#existing(def, namespace, name);
    if (def === NAMESPACES) {
      for (const r of RESOURCES) {
        if (!r.namespaced) continue;
        for (const key of [...this.#store.objects(r).keys()]) if (key.startsWith(`${name}/`)) this.#store.remove(r, key);
      }
    }
    const removed = this.#store.remove(def, metaNamespaceKey(namespace, name))?.object ?? last;
    const dependents = OWNERS[def.kind];
    if (dependents && namespace !== undefined) this.#release(dependents, namespace, last.metadata?.uid ?? "", propagation);
    return removed;
  }

  /** The garbage collector's part: delete (or, for `Orphan`, disown) the objects of `dependents` in `namespace` owned by `uid`. */
  #release(dependents: ResourceDef, namespace: string, uid: string, propagation: Propagation): void {
    for (const [key, object] of [...this.#store.objects(dependents)]) {
      if (!key.startsWith(`${namespace}/`)) continue;
      const owners = object.metadata?.ownerReferences ?? [];
      if (!owners.some((o) => o.uid === uid)) continue;
      if (propagation === "Orphan") {
        const rest = owners.filter((o) => o.uid !== uid);
        this.#store.put(dependents, key, { ...object, metadata: { ...object.metadata, ownerReferences: rest.length ? rest : undefined } });
      } else {
        this.remove(dependents, namespace, object.metadata?.name ?? "", propagation);
      }
    }
  }

  /**
   * Simplification: the API server rejects objects in a namespace that does not exist; the
   * simulator creates the Namespace instead, so tests and churn can use any namespace name.
   */
  ensureNamespace(name: string): void {
    if (this.#store.get(NAMESPACES, name)) return;
    this.#store.put(NAMESPACES, name, namespaceObject(name, this.#rng.uuid(), Date.now()));
  }
}
