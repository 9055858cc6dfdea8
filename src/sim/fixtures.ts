/**
 * @module
 * Realistic templates for the non-pod kinds: namespaces, nodes, deployments with their
 * ReplicaSets, services, configmaps, secrets, events and the `Widget` custom resource. Field
 * sets and order follow what the API server returns for objects made by the usual controllers.
 */
import type { KubeObject } from "../k8s/types.ts";
import { NAME_ALPHABET, type Random } from "./random.ts";
import { timestamp } from "./meta.ts";
import type { NodeRef, PodTemplateRef } from "./pods.ts";

export function namespaceObject(name: string, uid: string, nowMs: number): KubeObject {
  return {
    kind: "Namespace",
    apiVersion: "v1",
    metadata: { name, uid, creationTimestamp: timestamp(nowMs), labels: { "kubernetes.io/metadata.name": name } },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

/** Node `index` (0-based) of the simulated cluster; its pod CIDR is `10.244.<index+1>.0/24`. */
export function nodeObject(rng: Random, index: number, createdMs: number): { object: KubeObject; ref: NodeRef } {
  const name = `sim-node-${index + 1}`;
  const ref: NodeRef = { name, internalIP: `172.18.0.${index + 2}`, cidrOctet: index + 1 };
  const at = timestamp(createdMs);
  const heartbeat = timestamp(Date.now());
  const cond = (type: string, status: string, reason: string, message: string) => ({ type, status, lastHeartbeatTime: heartbeat, lastTransitionTime: at, reason, message });
  const cidr = `10.244.${ref.cidrOctet}.0/24`;
  const resources = { cpu: "4", "ephemeral-storage": "102350Mi", "hugepages-2Mi": "0", memory: "16331432Ki", pods: "110" };
  const labels: Record<string, string> = {
    "beta.kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "kubernetes.io/hostname": name,
    "kubernetes.io/os": "linux",
  };
  if (index === 0) labels["node-role.kubernetes.io/control-plane"] = "";
  const object: KubeObject = {
    kind: "Node",
    apiVersion: "v1",
    metadata: {
      name,
      uid: rng.uuid(),
      creationTimestamp: at,
      labels,
      annotations: { "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true" },
    },
    spec: { podCIDR: cidr, podCIDRs: [cidr], providerID: `sim://${name}` },
    status: {
      capacity: resources,
      allocatable: { ...resources, cpu: "3800m", memory: "15229096Ki" },
      conditions: [
        cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
      ],
      addresses: [
        { type: "InternalIP", address: ref.internalIP },
        { type: "Hostname", address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: rng.hex(32),
        systemUUID: rng.uuid(),
        bootID: rng.uuid(),
        kernelVersion: "6.8.0-1024-aws",
        osImage: "Debian GNU/Linux 12 (bookworm)",
        containerRuntimeVersion: "containerd://2.1.3",
        kubeletVersion: "v1.34.0",
        kubeProxyVersion: "",
        operatingSystem: "linux",
        architecture: "amd64",
      },
    },
  };
  return { object, ref };
}

const APPS: ReadonlyArray<{ app: string; image: string; port: number }> = [
  { app: "web", image: "nginx:1.27.3", port: 8080 },
  { app: "api", image: "ghcr.io/example/api:2.14.1", port: 8080 },
  { app: "worker", image: "ghcr.io/example/worker:2.14.1", port: 9090 },
  { app: "cache", image: "redis:7.4.1", port: 6379 },
  { app: "search", image: "ghcr.io/example/search:0.9.3", port: 9200 },
];

function containerTemplate(t: { app: string; image: string; port: number }) {
  return {
    name: t.app,
    image: t.image,
    ports: [{ name: "http", containerPort: t.port, protocol: "TCP" }],
    resources: { limits: { memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: "IfNotPresent",
  };
}

const podTemplateSpec = (labels: Record<string, string>, t: { app: string; image: string; port: number }) => ({
  metadata: { labels },
  spec: {
    containers: [containerTemplate(t)],
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 30,
    dnsPolicy: "ClusterFirst",
    securityContext: {},
    schedulerName: "default-scheduler",
  },
});

/** Deployment number `index` of a namespace, with its current ReplicaSet. */
export function deploymentObjects(rng: Random, namespace: string, index: number, replicas: number, createdMs: number) {
  const base = APPS[index % APPS.length] ?? APPS[0]!;
  const spec = { ...base, app: index < APPS.length ? base.app : `${base.app}-${Math.floor(index / APPS.length) + 1}` };
  const at = timestamp(createdMs);
  const hash = rng.string(NAME_ALPHABET, 10);
  const deployUid = rng.uuid();
  const rsName = `${spec.app}-${hash}`;
  const rsUid = rng.uuid();
  const deployment: KubeObject = {
    kind: "Deployment",
    apiVersion: "apps/v1",
    metadata: { name: spec.app, namespace, uid: deployUid, generation: 1, creationTimestamp: at, labels: { app: spec.app }, annotations: { "deployment.kubernetes.io/revision": "1" } },
    spec: {
      replicas,
      selector: { matchLabels: { app: spec.app } },
      template: podTemplateSpec({ app: spec.app }, spec),
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: 1,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      conditions: [
        { type: "Available", status: "True", lastUpdateTime: at, lastTransitionTime: at, reason: "MinimumReplicasAvailable", message: "Deployment has minimum availability." },
        { type: "Progressing", status: "True", lastUpdateTime: at, lastTransitionTime: at, reason: "NewReplicaSetAvailable", message: `ReplicaSet "${rsName}" has successfully progressed.` },
      ],
    },
  };
  const rsLabels = { app: spec.app, "pod-template-hash": hash };
  const replicaSet: KubeObject = {
    kind: "ReplicaSet",
    apiVersion: "apps/v1",
    metadata: {
      name: rsName,
      namespace,
      uid: rsUid,
      generation: 1,
      creationTimestamp: at,
      labels: rsLabels,
      annotations: {
        "deployment.kubernetes.io/desired-replicas": String(replicas),
        "deployment.kubernetes.io/max-replicas": String(replicas + Math.ceil(replicas / 4)),
        "deployment.kubernetes.io/revision": "1",
      },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: spec.app, uid: deployUid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { replicas, selector: { matchLabels: rsLabels }, template: podTemplateSpec(rsLabels, spec) },
    status: { replicas, fullyLabeledReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas, observedGeneration: 1 },
  };
  const template: PodTemplateRef = { namespace, app: spec.app, replicaSetName: rsName, replicaSetUid: rsUid, templateHash: hash, image: spec.image, port: spec.port };
  return { deployment, replicaSet, template };
}

export function serviceObject(rng: Random, t: PodTemplateRef, createdMs: number): KubeObject {
  const clusterIP = `10.96.${rng.between(0, 255)}.${rng.between(1, 254)}`;
  return {
    kind: "Service",
    apiVersion: "v1",
    metadata: { name: t.app, namespace: t.namespace, uid: rng.uuid(), creationTimestamp: timestamp(createdMs), labels: { app: t.app } },
    spec: {
      ports: [{ name: "http", protocol: "TCP", port: 80, targetPort: t.port }],
      selector: { app: t.app },
      clusterIP,
      clusterIPs: [clusterIP],
      type: "ClusterIP",
      sessionAffinity: "None",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      internalTrafficPolicy: "Cluster",
    },
    status: { loadBalancer: {} },
  };
}

export function rootCaConfigMap(rng: Random, namespace: string, createdMs: number): KubeObject {
  const body = Array.from({ length: 6 }, () => rng.string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 64)).join("\n");
  return {
    kind: "ConfigMap",
    apiVersion: "v1",
    metadata: {
      name: "kube-root-ca.crt",
      namespace,
      uid: rng.uuid(),
      creationTimestamp: timestamp(createdMs),
      annotations: {
        "kubernetes.io/description":
          "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.",
      },
    },
    data: { "ca.crt": `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n` },
  };
}

export function appConfigMap(rng: Random, t: PodTemplateRef, createdMs: number): KubeObject {
  return {
    kind: "ConfigMap",
    apiVersion: "v1",
    metadata: { name: `${t.app}-config`, namespace: t.namespace, uid: rng.uuid(), creationTimestamp: timestamp(createdMs), labels: { app: t.app } },
    data: { LOG_LEVEL: rng.pick(["info", "debug", "warn"]), LISTEN_PORT: String(t.port), "feature-flags.yaml": `canary: ${rng.chance(0.5)}\nmaxConnections: ${rng.between(50, 500)}\n` },
  };
}

const b64 = (s: string): string => Buffer.from(s).toString("base64");

export function appSecret(rng: Random, t: PodTemplateRef, createdMs: number): KubeObject {
  return {
    kind: "Secret",
    apiVersion: "v1",
    metadata: { name: `${t.app}-credentials`, namespace: t.namespace, uid: rng.uuid(), creationTimestamp: timestamp(createdMs), labels: { app: t.app } },
    data: { username: b64(t.app), password: b64(rng.string(NAME_ALPHABET, 24)) },
    type: "Opaque",
  };
}

export function scalingEvent(rng: Random, deployment: KubeObject, rsName: string, replicas: number, createdMs: number): KubeObject {
  const at = timestamp(createdMs);
  const meta = deployment.metadata ?? {};
  return {
    kind: "Event",
    apiVersion: "v1",
    metadata: { name: `${meta.name}.${rng.hex(16)}`, namespace: meta.namespace, uid: rng.uuid(), creationTimestamp: at },
    involvedObject: { kind: "Deployment", namespace: meta.namespace, name: meta.name, uid: meta.uid, apiVersion: "apps/v1" },
    reason: "ScalingReplicaSet",
    message: `Scaled up replica set ${rsName} from 0 to ${replicas}`,
    source: { component: "deployment-controller" },
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
    type: "Normal",
    eventTime: null,
    reportingComponent: "deployment-controller",
    reportingInstance: "",
  };
}

/** A `widgets.example.com/v1` object (stored with sorted keys, as unstructured objects are). */
export function widgetObject(rng: Random, namespace: string, index: number, createdMs: number): KubeObject {
  return {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name: `widget-${index + 1}`, namespace, uid: rng.uuid(), generation: 1, creationTimestamp: timestamp(createdMs) },
    spec: { color: rng.pick(["red", "green", "blue"]), size: rng.between(1, 10) },
    status: { phase: "Ready" },
  };
}
