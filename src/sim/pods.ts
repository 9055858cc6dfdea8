/**
 * @module
 * Pods modelled on a real Deployment-owned pod (labels, ownerReferences to its ReplicaSet,
 * managedFields from kube-controller-manager and kubelet, probes, conditions,
 * containerStatuses, podIP/podIPs), and the lifecycle steps churn applies to them. Each step
 * mutates the pod it is given: callers pass a copy of the stored object.
 */
import type { Pod, PodCondition } from "kubernetes-types/core/v1.js";
import { NAME_ALPHABET, type Random } from "./random.ts";
import type { KubeObject } from "../k8s/types.ts";
import { copyObject, timestamp } from "./meta.ts";

/** The ReplicaSet a pod belongs to, and what its template says. */
export interface PodTemplateRef {
  namespace: string;
  app: string;
  replicaSetName: string;
  replicaSetUid: string;
  templateHash: string;
  image: string;
  port: number;
  /**
   * Slim pods: no managedFields, service-account token mount, default tolerations or probes
   * (about 2.5 KB of JSON instead of 4.3 KB): a lean workload's pods, as a client that
   * leaves out managedFields reads them.
   */
  slim?: boolean;
}

/** A node a pod can be scheduled to; pods get IPs from its pod CIDR. */
export interface NodeRef {
  name: string;
  internalIP: string;
  /** Third octet of the node's pod CIDR `10.244.<n>.0/24`. */
  cidrOctet: number;
}

/** Label churn flips, so selector watches (`track=canary`) see objects enter and leave. */
const TRACK_LABEL = "track";

const condition = (type: string, status: boolean, at: string, reason?: string, message?: string): PodCondition => {
  const c: PodCondition = { type, status: status ? "True" : "False", lastProbeTime: null as unknown as string, lastTransitionTime: at };
  if (reason) c.reason = reason;
  if (message) c.message = message;
  return c;
};

/** Who owns which fields (trimmed to the top-level field sets, which keeps pods near 4 KB). */
function managedFields(app: string, rsUid: string, at: string) {
  const leaves = (names: string[]) => Object.fromEntries(names.map((n) => [`f:${n}`, {}]));
  return [
    {
      manager: "kube-controller-manager",
      operation: "Update",
      apiVersion: "v1",
      time: at,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:metadata": { "f:generateName": {}, "f:labels": { ".": {}, ...leaves(["app", "pod-template-hash", TRACK_LABEL]) }, "f:ownerReferences": { ".": {}, [`k:{"uid":"${rsUid}"}`]: {} } },
        "f:spec": {
          "f:containers": { [`k:{"name":"${app}"}`]: { ".": {}, ...leaves(["image", "imagePullPolicy", "livenessProbe", "name", "ports", "readinessProbe", "resources"]) } },
          ...leaves(["dnsPolicy", "enableServiceLinks", "restartPolicy", "schedulerName", "securityContext", "terminationGracePeriodSeconds"]),
        },
      },
    },
    {
      manager: "kubelet",
      operation: "Update",
      apiVersion: "v1",
      time: at,
      fieldsType: "FieldsV1",
      fieldsV1: { "f:status": leaves(["conditions", "containerStatuses", "hostIP", "hostIPs", "phase", "podIP", "podIPs", "startTime"]) },
      subresource: "status",
    },
  ];
}

/**
 * A copy of a stored pod that the transitions below may mutate. They touch only metadata
 * fields, labels and status, so the spec is shared with the stored (immutable) object: deep
 * copying whole 4 KB pods dominated churn's cost.
 */
export function copyForTransition(pod: KubeObject): Pod {
  const { metadata = {}, status } = pod as Pod;
  return { ...(pod as Pod), metadata: { ...metadata, labels: { ...metadata.labels } }, status: copyObject(status ?? {}) };
}

/** A freshly scheduled pod: Pending, its container still being created. */
export function newPod(rng: Random, t: PodTemplateRef, node: NodeRef, nowMs: number): Pod {
  const at = timestamp(nowMs);
  const tokenVolume = `kube-api-access-${rng.string("abcdefghijklmnopqrstuvwxyz0123456789", 5)}`;
  const probe = (path: string, initialDelaySeconds?: number) => ({
    httpGet: { path, port: t.port, scheme: "HTTP" },
    ...(initialDelaySeconds ? { initialDelaySeconds } : {}),
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
  });
  return {
    kind: "Pod",
    apiVersion: "v1",
    metadata: {
      name: `${t.replicaSetName}-${rng.string(NAME_ALPHABET, 5)}`,
      generateName: `${t.replicaSetName}-`,
      namespace: t.namespace,
      uid: rng.uuid(),
      creationTimestamp: at,
      labels: { app: t.app, "pod-template-hash": t.templateHash, [TRACK_LABEL]: rng.chance(0.2) ? "canary" : "stable" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: t.replicaSetName, uid: t.replicaSetUid, controller: true, blockOwnerDeletion: true }],
      ...(t.slim ? {} : { managedFields: managedFields(t.app, t.replicaSetUid, at) }),
    },
    spec: {
      ...(t.slim
        ? { automountServiceAccountToken: false }
        : {
            volumes: [
              {
                name: tokenVolume,
                projected: {
                  sources: [
                    { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
                    { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                    { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
                  ],
                  defaultMode: 420,
                },
              },
            ],
          }),
      containers: [
        {
          name: t.app,
          image: t.image,
          ports: [{ name: "http", containerPort: t.port, protocol: "TCP" }],
          resources: { limits: { memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
          ...(t.slim
            ? {}
            : {
                volumeMounts: [{ name: tokenVolume, readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }],
                livenessProbe: probe("/healthz", 10),
                readinessProbe: probe("/readyz"),
              }),
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
          imagePullPolicy: "IfNotPresent",
        },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      serviceAccount: "default",
      nodeName: node.name,
      securityContext: {},
      schedulerName: "default-scheduler",
      ...(t.slim
        ? {}
        : {
            tolerations: [
              { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
              { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
            ],
          }),
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
    },
    status: {
      phase: "Pending",
      conditions: [
        condition("PodReadyToStartContainers", false, at),
        condition("Initialized", true, at),
        condition("Ready", false, at, "ContainersNotReady", `containers with unready status: [${t.app}]`),
        condition("ContainersReady", false, at, "ContainersNotReady", `containers with unready status: [${t.app}]`),
        condition("PodScheduled", true, at),
      ],
      hostIP: node.internalIP,
      hostIPs: [{ ip: node.internalIP }],
      startTime: at,
      containerStatuses: [
        {
          name: t.app,
          state: { waiting: { reason: "ContainerCreating" } },
          lastState: {},
          ready: false,
          restartCount: 0,
          image: t.image,
          imageID: "",
          started: false,
        },
      ],
      qosClass: "Burstable",
    },
  };
}

const setCondition = (pod: Pod, type: string, status: boolean, at: string): void => {
  for (const c of pod.status?.conditions ?? []) {
    if (c.type !== type) continue;
    const value = status ? "True" : "False";
    if (c.status !== value) c.lastTransitionTime = at;
    c.status = value;
    if (status) {
      delete c.reason;
      delete c.message;
    }
  }
};

const containerId = (rng: Random): string => `containerd://${rng.hex(64)}`;

/** The kubelet started the container: Running, with a pod IP and a ready container. */
export function startPod(pod: Pod, rng: Random, node: NodeRef, nowMs: number): void {
  const at = timestamp(nowMs);
  // kubernetes-types marks server-owned fields readonly; the simulator is the server.
  const status = pod.status ?? Object.assign(pod, { status: {} }).status;
  const ip = `10.244.${node.cidrOctet}.${rng.between(2, 254)}`;
  status.phase = "Running";
  status.podIP = ip;
  status.podIPs = [{ ip }];
  for (const type of ["PodReadyToStartContainers", "Ready", "ContainersReady"]) setCondition(pod, type, true, at);
  for (const cs of status.containerStatuses ?? []) {
    cs.state = { running: { startedAt: at } };
    cs.ready = true;
    cs.imageID = `${cs.image.includes("/") ? "" : "docker.io/library/"}${cs.image.split(":")[0]}@sha256:${rng.hex(64)}`;
    cs.containerID = containerId(rng);
    cs.started = true;
  }
}

/** The container exited and the kubelet restarted it: restartCount goes up, lastState records the exit. */
export function restartContainer(pod: Pod, rng: Random, nowMs: number): void {
  const at = timestamp(nowMs);
  for (const cs of pod.status?.containerStatuses ?? []) {
    const oom = rng.chance(0.3);
    cs.lastState = {
      terminated: {
        exitCode: oom ? 137 : 1,
        reason: oom ? "OOMKilled" : "Error",
        startedAt: cs.state?.running?.startedAt ?? at,
        finishedAt: at,
        ...(cs.containerID ? { containerID: cs.containerID } : {}),
      },
    };
    cs.restartCount += 1;
    cs.state = { running: { startedAt: at } };
    cs.containerID = containerId(rng);
  }
}

/** A readiness probe failed or recovered: Ready, ContainersReady and the containers' `ready` flip. */
export function flapReadiness(pod: Pod, nowMs: number): void {
  const at = timestamp(nowMs);
  const statuses = pod.status?.containerStatuses ?? [];
  const ready = !statuses.every((c) => c.ready);
  for (const c of statuses) c.ready = ready;
  for (const type of ["Ready", "ContainersReady"]) setCondition(pod, type, ready, at);
  if (ready) return;
  for (const c of pod.status?.conditions ?? []) {
    if (c.type !== "Ready" && c.type !== "ContainersReady") continue;
    c.reason = "ContainersNotReady";
    c.message = `containers with unready status: [${statuses.map((s) => s.name).join(" ")}]`;
  }
}

/** Flip the track label between `stable` and `canary`. */
export function relabel(pod: Pod): void {
  const labels = ((pod.metadata ??= {}).labels ??= {});
  labels[TRACK_LABEL] = labels[TRACK_LABEL] === "canary" ? "stable" : "canary";
}

/** Graceful deletion has begun: deletionTimestamp is the end of the grace period. */
export function markTerminating(pod: Pod, nowMs: number): void {
  const grace = pod.spec?.terminationGracePeriodSeconds ?? 30;
  // kubernetes-types marks these readonly: they are server-owned, and this is the server.
  Object.assign((pod.metadata ??= {}), { deletionTimestamp: timestamp(nowMs + grace * 1000), deletionGracePeriodSeconds: grace });
}

export const isTerminating = (pod: Pod): boolean => pod.metadata?.deletionTimestamp !== undefined;
