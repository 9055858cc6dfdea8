/**
 * @module
 * Request bodies in Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), which kubectl's
 * typed client sends for `kubectl create namespace|configmap|secret|deployment|service`: the
 * `k8s\0` prefix, a `runtime.Unknown` envelope naming apiVersion and kind, and the object's
 * message (`generated.proto` of k8s.io/api and apimachinery), decoded with `protobufjs` into the
 * JSON the same object has. Go writes every field that is not a pointer, zero or not, where JSON
 * leaves zero values out; so zero scalars are dropped here unless the Go field is a pointer. Only
 * the messages of the kinds those commands make are known (the fields they set, and then some):
 * a body of another kind is refused with a 415 that says to send JSON.
 */
import protobuf from "protobufjs";
import { ApiError } from "./errors.ts";
import { unsupportedMediaType } from "./errors.ts";
import { isJsonObject } from "./meta.ts";

export const PROTOBUF = "application/vnd.kubernetes.protobuf";

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** A field: number, type (a scalar, a message below, `map`, `bytesmap`), repeated, Go pointer (zero is meaningful). */
type Field = [id: number, type: string, flags?: "repeated" | "pointer"];

const S = "string";
const I32 = "int32";
const I64 = "int64";
const B = "bool";

const MESSAGES: Record<string, Record<string, Field>> = {
  Unknown: { typeMeta: [1, "TypeMeta"], raw: [2, "bytes"], contentEncoding: [3, S], contentType: [4, S] },
  TypeMeta: { apiVersion: [1, S], kind: [2, S] },
  Time: { seconds: [1, I64], nanos: [2, I32] },
  IntOrString: { type: [1, I64], intVal: [2, I32], strVal: [3, S] },
  Quantity: { string: [1, S] },
  ObjectMeta: {
    name: [1, S],
    generateName: [2, S],
    namespace: [3, S],
    uid: [5, S],
    resourceVersion: [6, S],
    generation: [7, I64],
    creationTimestamp: [8, "Time"],
    deletionTimestamp: [9, "Time", "pointer"],
    deletionGracePeriodSeconds: [10, I64, "pointer"],
    labels: [11, "map"],
    annotations: [12, "map"],
    ownerReferences: [13, "OwnerReference", "repeated"],
    finalizers: [14, S, "repeated"],
  },
  OwnerReference: { kind: [1, S], name: [3, S], uid: [4, S], apiVersion: [5, S], controller: [6, B, "pointer"], blockOwnerDeletion: [7, B, "pointer"] },
  LabelSelector: { matchLabels: [1, "map"], matchExpressions: [2, "LabelSelectorRequirement", "repeated"] },
  LabelSelectorRequirement: { key: [1, S], operator: [2, S], values: [3, S, "repeated"] },
  ConfigMap: { metadata: [1, "ObjectMeta"], data: [2, "map"], binaryData: [3, "bytesmap"], immutable: [4, B, "pointer"] },
  Secret: { metadata: [1, "ObjectMeta"], data: [2, "bytesmap"], type: [3, S], stringData: [4, "map"], immutable: [5, B, "pointer"] },
  Namespace: { metadata: [1, "ObjectMeta"], spec: [2, "NamespaceSpec"], status: [3, "NamespaceStatus"] },
  NamespaceSpec: { finalizers: [1, S, "repeated"] },
  NamespaceStatus: { phase: [1, S] },
  Service: { metadata: [1, "ObjectMeta"], spec: [2, "ServiceSpec"], status: [3, "ServiceStatus"] },
  ServiceSpec: {
    ports: [1, "ServicePort", "repeated"],
    selector: [2, "map"],
    clusterIP: [3, S],
    type: [4, S],
    externalIPs: [5, S, "repeated"],
    sessionAffinity: [7, S],
    loadBalancerIP: [8, S],
    externalName: [10, S],
    externalTrafficPolicy: [11, S],
    clusterIPs: [18, S, "repeated"],
    ipFamilyPolicy: [17, S, "pointer"],
    ipFamilies: [19, S, "repeated"],
    internalTrafficPolicy: [22, S, "pointer"],
  },
  ServicePort: { name: [1, S], protocol: [2, S], port: [3, I32], targetPort: [4, "IntOrString"], nodePort: [5, I32], appProtocol: [6, S, "pointer"] },
  ServiceStatus: { loadBalancer: [1, "LoadBalancerStatus"] },
  LoadBalancerStatus: {},
  Deployment: { metadata: [1, "ObjectMeta"], spec: [2, "DeploymentSpec"], status: [3, "DeploymentStatus"] },
  DeploymentSpec: {
    replicas: [1, I32, "pointer"],
    selector: [2, "LabelSelector", "pointer"],
    template: [3, "PodTemplateSpec"],
    strategy: [4, "DeploymentStrategy"],
    minReadySeconds: [5, I32],
    revisionHistoryLimit: [6, I32, "pointer"],
    paused: [7, B],
    progressDeadlineSeconds: [9, I32, "pointer"],
  },
  DeploymentStrategy: { type: [1, S], rollingUpdate: [2, "RollingUpdateDeployment", "pointer"] },
  RollingUpdateDeployment: { maxUnavailable: [1, "IntOrString", "pointer"], maxSurge: [2, "IntOrString", "pointer"] },
  DeploymentStatus: {},
  PodTemplateSpec: { metadata: [1, "ObjectMeta"], spec: [2, "PodSpec"] },
  PodSpec: {
    containers: [2, "Container", "repeated"],
    restartPolicy: [3, S],
    terminationGracePeriodSeconds: [4, I64, "pointer"],
    dnsPolicy: [6, S],
    nodeSelector: [7, "map"],
    serviceAccountName: [8, S],
    nodeName: [10, S],
    schedulerName: [19, S],
    initContainers: [20, "Container", "repeated"],
    automountServiceAccountToken: [21, B, "pointer"],
    priorityClassName: [24, S],
    enableServiceLinks: [30, B, "pointer"],
  },
  Container: {
    name: [1, S],
    image: [2, S],
    command: [3, S, "repeated"],
    args: [4, S, "repeated"],
    workingDir: [5, S],
    ports: [6, "ContainerPort", "repeated"],
    env: [7, "EnvVar", "repeated"],
    resources: [8, "ResourceRequirements"],
    terminationMessagePath: [13, S],
    imagePullPolicy: [14, S],
    stdin: [16, B],
    stdinOnce: [17, B],
    tty: [18, B],
    terminationMessagePolicy: [20, S],
  },
  ContainerPort: { name: [1, S], hostPort: [2, I32], containerPort: [3, I32], protocol: [4, S], hostIP: [5, S] },
  EnvVar: { name: [1, S], value: [2, S] },
  ResourceRequirements: { limits: [1, "quantitymap"], requests: [2, "quantitymap"] },
};

/** The kinds whose messages are known, by `apiVersion/kind`. */
const KINDS: Record<string, string> = {
  "v1/ConfigMap": "ConfigMap",
  "v1/Secret": "Secret",
  "v1/Namespace": "Namespace",
  "v1/Service": "Service",
  "apps/v1/Deployment": "Deployment",
};

const root = protobuf.Root.fromJSON({
  nested: Object.fromEntries(
    Object.entries(MESSAGES).map(([name, fields]) => [
      name,
      {
        fields: Object.fromEntries(
          Object.entries(fields).map(([field, [id, type, flag]]) => {
            if (type === "map") return [field, { keyType: S, type: S, id }];
            if (type === "bytesmap") return [field, { keyType: S, type: "bytes", id }];
            if (type === "quantitymap") return [field, { keyType: S, type: "Quantity", id }];
            return [field, { type, id, ...(flag === "repeated" ? { rule: "repeated" } : {}) }];
          }),
        ),
      },
    ]),
  ),
});

const refused = (why: string): ApiError =>
  new ApiError({ ...unsupportedMediaType(["application/json"]), message: `${why}: the simulated cluster reads protobuf only for what kubectl create makes; send it as application/json` });

/** The decoded object as its JSON: zero values of non-pointer fields dropped, Time, IntOrString and Quantity as JSON writes them. */
function toJson(type: string, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, [, fieldType, flag]] of Object.entries(MESSAGES[type] ?? {})) {
    const v = value[name];
    if (v === undefined) continue;
    const convert = (x: unknown): unknown => {
      if (fieldType === "Time") {
        const { seconds = 0 } = x as { seconds?: number };
        return seconds === 0 ? undefined : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
      }
      if (fieldType === "IntOrString") {
        const { type: t = 0, intVal = 0, strVal = "" } = x as { type?: number; intVal?: number; strVal?: string };
        return t === 1 ? strVal : intVal;
      }
      if (fieldType === "quantitymap") return Object.fromEntries(Object.entries(x as Record<string, { string?: string }>).map(([k, q]) => [k, q.string ?? "0"]));
      if (MESSAGES[fieldType] && isJsonObject(x)) return toJson(fieldType, x);
      return x;
    };
    const json = Array.isArray(v) ? v.map(convert) : convert(v);
    const zero = json === "" || json === 0 || json === false || (Array.isArray(json) && json.length === 0) || (isJsonObject(json) && Object.keys(json).length === 0 && !MESSAGES[fieldType]);
    if (json === undefined || (zero && flag !== "pointer")) continue;
    out[name] = json;
  }
  return out;
}

/** A protobuf request body as the JSON object it encodes (apiVersion and kind from its envelope). */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) throw refused("the body is not Kubernetes protobuf (no k8s\\0 prefix)");
  let envelope: Record<string, unknown>;
  try {
    const Unknown = root.lookupType("Unknown");
    envelope = Unknown.toObject(Unknown.decode(body.subarray(MAGIC.length)), { bytes: Buffer as unknown as typeof String, longs: Number });
  } catch (e) {
    throw refused(`the protobuf body could not be read (${(e as Error).message})`);
  }
  const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const kind = KINDS[`${typeMeta.apiVersion}/${typeMeta.kind}`];
  if (!kind) throw refused(`a ${typeMeta.kind ?? "body"} of ${typeMeta.apiVersion ?? "no apiVersion"} in protobuf`);
  const message = root.lookupType(kind);
  const decoded = message.toObject(message.decode((envelope.raw as Buffer | undefined) ?? Buffer.alloc(0)), { longs: Number, bytes: String });
  return { kind: typeMeta.kind, apiVersion: typeMeta.apiVersion, ...toJson(kind, decoded) };
}
