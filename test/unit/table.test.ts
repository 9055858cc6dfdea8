/**
 * @module
 * The shared printer against kube-apiserver's own pod Table, and the watch-stream transform that
 * turns a hub's JSON events into Table events.
 */
import { describe, expect, it } from "vitest";
import { tableEvents } from "../../src/http/table-response.ts";
import { toTable, type TableOptions } from "../../src/k8s/table.ts";
import type { KubeObject } from "../../src/k8s/types.ts";

/**
 * The column definitions kube-apiserver sends for pods (kubectl `get pod -v 9` against
 * Kubernetes 1.29; kubernetes `pkg/printers/internalversion/printers.go`).
 */
const POD_COLUMNS = [
  {
    name: "Name",
    type: "string",
    format: "name",
    description:
      "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    priority: 0,
  },
  { name: "Ready", type: "string", format: "", description: "The aggregate readiness state of this pod for accepting traffic.", priority: 0 },
  { name: "Status", type: "string", format: "", description: "The aggregate status of the containers in this pod.", priority: 0 },
  {
    name: "Restarts",
    type: "string",
    format: "",
    description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    priority: 0,
  },
  {
    name: "Age",
    type: "string",
    format: "",
    description:
      "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    priority: 0,
  },
  { name: "IP", type: "string", format: "", description: "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", priority: 1 },
  {
    name: "Node",
    type: "string",
    format: "",
    description:
      "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.",
    priority: 1,
  },
  {
    name: "Nominated Node",
    type: "string",
    format: "",
    description:
      "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.",
    priority: 1,
  },
  {
    name: "Readiness Gates",
    type: "string",
    format: "",
    description:
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    priority: 1,
  },
];

const METADATA: TableOptions = { version: "v1", includeObject: "Metadata" };
const PODS = { group: "", resource: "pods" };

/** A running pod like the one in the API server's captured Table, created 34 minutes ago. */
function pod(name = "hello-world", rv = "279474"): KubeObject {
  return {
    kind: "Pod",
    apiVersion: "v1",
    metadata: { name, namespace: "default", uid: "0b295a7b-7365-44a0-a983-708112008c8b", resourceVersion: rv, creationTimestamp: new Date(Date.now() - 34 * 60_000 - 5_000).toISOString() },
    spec: { containers: [{ name: "hello-world", image: "gcr.io/google-samples/hello-app:1.0" }], nodeName: "c1-node1" },
    status: { phase: "Running", podIP: "10.0.15.103", containerStatuses: [{ name: "hello-world", ready: true, restartCount: 0, state: { running: {} } }] },
  };
}

describe("toTable", () => {
  it("prints a pod as kube-apiserver does: its columns, cells and a PartialObjectMetadata row object", () => {
    const object = pod();
    const table = toTable(PODS, [object], { resourceVersion: "279474" }, METADATA);
    expect(table).toEqual({
      kind: "Table",
      apiVersion: "meta.k8s.io/v1",
      metadata: { resourceVersion: "279474" },
      columnDefinitions: POD_COLUMNS,
      rows: [
        {
          cells: ["hello-world", "1/1", "Running", "0", "34m", "10.0.15.103", "c1-node1", "<none>", "<none>"],
          object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: object.metadata },
        },
      ],
    });
    // Field order as the API server writes it.
    expect(Object.keys(table)).toEqual(["kind", "apiVersion", "metadata", "columnDefinitions", "rows"]);
    expect(Object.keys(table.rows[0]!)).toEqual(["cells", "object"]);
  });

  it("names the row objects' group/version after the Table's (v1beta1 when that was negotiated)", () => {
    const table = toTable(PODS, [pod()], {}, { version: "v1beta1", includeObject: "Metadata" });
    expect(table.apiVersion).toBe("meta.k8s.io/v1beta1");
    expect(table.rows[0]!.object).toMatchObject({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1beta1" });
  });

  it("honours includeObject and withHeaders", () => {
    expect(toTable(PODS, [pod()], {}, { version: "v1", includeObject: "None" }).rows[0]!.object).toBeNull();
    expect(toTable(PODS, [pod()], {}, { version: "v1", includeObject: "Object" }).rows[0]!.object).toMatchObject({ kind: "Pod", spec: { nodeName: "c1-node1" } });
    expect(toTable(PODS, [pod()], {}, METADATA, false).columnDefinitions).toBeNull();
  });

  it("keys printers by group: apps deployments get theirs, a custom resource gets Name and Age", () => {
    const names = (group: string, resource: string) => toTable({ group, resource }, [], {}, METADATA).columnDefinitions!.map((c) => `${c.name}${c.priority ? "*" : ""}`);
    expect(names("apps", "deployments")).toEqual(["Name", "Ready", "Up-to-date", "Available", "Age", "Containers*", "Images*", "Selector*"]);
    expect(names("", "nodes")).toEqual(["Name", "Status", "Roles", "Age", "Version", "Internal-IP*", "External-IP*", "OS-Image*", "Kernel-Version*", "Container-Runtime*"]);
    expect(names("example.com", "widgets")).toEqual(["Name", "Age"]);
    expect(names("example.com", "deployments")).toEqual(["Name", "Age"]);
  });
});

describe("tableEvents", () => {
  async function convert(chunks: string[]): Promise<Array<{ type: string; object: any }>> {
    const encoder = new TextEncoder();
    const input = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(encoder.encode(c));
        controller.close();
      },
    });
    const text = await new Response(input.pipeThrough(tableEvents(PODS, METADATA))).text();
    expect(text.endsWith("\n")).toBe(true);
    return text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
  }

  it("turns each event into a one-row Table, with column definitions on the first only", async () => {
    const lines = [pod("a", "10"), pod("b", "11")].map((o, i) => `${JSON.stringify({ type: i ? "MODIFIED" : "ADDED", object: o })}\n`).join("");
    // Chunk boundaries fall anywhere, mid-line included.
    const events = await convert([lines.slice(0, 17), lines.slice(17, 400), lines.slice(400)]);
    expect(events.map((e) => [e.type, e.object.kind, e.object.metadata.resourceVersion, e.object.rows.length, e.object.rows[0].cells[0]])).toEqual([
      ["ADDED", "Table", "10", 1, "a"],
      ["MODIFIED", "Table", "11", 1, "b"],
    ]);
    expect(events[0]!.object.columnDefinitions).toEqual(POD_COLUMNS);
    expect(events[1]!.object.columnDefinitions).toBeNull();
  });

  it("converts BOOKMARKs like any event and passes ERROR events through unchanged", async () => {
    const bookmark = {
      type: "BOOKMARK",
      object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: "12", annotations: { "k8s.io/initial-events-end": "true" } }, spec: { containers: null }, status: {} },
    };
    const error = '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}';
    const events = await convert([`${JSON.stringify(bookmark)}\n${error}\n`]);
    expect(events[0]).toMatchObject({
      type: "BOOKMARK",
      object: { kind: "Table", metadata: { resourceVersion: "12" }, rows: [{ object: { kind: "PartialObjectMetadata", metadata: bookmark.object.metadata } }] },
    });
    expect(JSON.stringify(events[1])).toBe(error);
  });
});
