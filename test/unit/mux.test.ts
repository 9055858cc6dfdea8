/** The relay socket's wire protocol (src/k8s/mux.ts) and its acknowledgement ledger. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AckLedger } from "../../src/k8s/ack-ledger.ts";
import { eventLine } from "../../src/k8s/event.ts";
import {
  closedLine,
  failureLine,
  lastResourceVersion,
  lineId,
  lineType,
  opOfQuery,
  pages,
  parseClientMessage,
  resourceVersionOf,
  socketFraming,
  taggedPieces,
  tagLines,
  viewOpOfQuery,
  viewQuery,
  watchQuery,
} from "../../src/k8s/mux.ts";
import { badRequest } from "../../src/k8s/status.ts";
import { BATCH_PROTOCOL, DELTA_PROTOCOL, GZIP_BATCH_PROTOCOL, GZIP_DELTA_PROTOCOL, PACED_PROTOCOL } from "../../src/k8s/websocket.ts";

describe("client messages", () => {
  it("parses watch ops with every parameter, and unwatch", () => {
    const op = {
      op: "watch",
      id: "w1",
      path: "/clusters/prod/api/v1/namespaces/a/pods",
      labelSelector: "app=web",
      fieldSelector: "status.phase=Running",
      shardSelector: "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
      resourceVersion: "12",
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      compact: true,
      timeoutSeconds: 30,
      limit: 100,
    };
    expect(parseClientMessage(JSON.stringify(op))).toEqual({ op });
    expect(parseClientMessage('{"op":"unwatch","id":"w1"}')).toEqual({ op: { op: "unwatch", id: "w1" } });
    expect(parseClientMessage('{"type":"ACK","received":42}')).toEqual({ ack: 42 });
  });

  it("refuses anything else with a 400 Status, naming the id when there is one", () => {
    const refused = (text: string | ArrayBuffer) => {
      const parsed = parseClientMessage(text);
      if (!("refused" in parsed)) throw new Error(`accepted ${String(text)}`);
      expect(parsed.refused).toMatchObject({ kind: "Status", code: 400, reason: "BadRequest" });
      return parsed;
    };
    refused(new ArrayBuffer(2));
    refused("{");
    refused("null");
    refused('"watch"');
    refused('{"op":"watch","path":"/api/v1/pods"}');
    refused('{"op":"watch","id":"has space","path":"/api/v1/pods"}');
    refused(`{"op":"watch","id":"${"x".repeat(129)}","path":"/api/v1/pods"}`);
    expect(refused('{"op":"watch","id":"w","path":"api/v1/pods"}')).toMatchObject({ id: "w", refused: { details: { name: "w" } } });
    refused('{"op":"watch","id":"w","path":"/api/v1/pods?watch=1"}');
    // The relay's own routes are not collections: a socket op never reaches them.
    refused('{"op":"watch","id":"w","path":"/healthz"}');
    refused('{"op":"watch","id":"w","path":"/_relay/socket"}');
    refused('{"op":"watch","id":"w","path":"/api/v1/pods","labelSelector":1}');
    refused('{"op":"watch","id":"w","path":"/api/v1/pods","sendInitialEvents":"true"}');
    refused('{"op":"watch","id":"w","path":"/api/v1/pods","limit":1.5}');
    refused('{"op":"watch","id":"w","path":"/api/v1/pods","timeoutSeconds":-1}');
    refused('{"op":"stop","id":"w"}');
    refused('{"type":"ACK","received":"1"}');
  });

  it("reads an op back from the standalone watch's query, as the client makes one from a watch URL", () => {
    const op = { op: "watch" as const, id: "w", path: "/api/v1/pods", labelSelector: "a=b", resourceVersion: "5", allowWatchBookmarks: true, compact: true, timeoutSeconds: 9 };
    expect(opOfQuery("w", "/api/v1/pods", watchQuery(op))).toEqual(op);
  });

  it("reads a view op back from the standalone live view's query, as the client makes one from a view URL", () => {
    const op = { op: "view" as const, id: "v", path: "/api/v1/pods", labelSelector: "a=b", sort: "-Status,name", filter: "name~web", rows: "cells", offset: 100, limit: 50, timeoutSeconds: 9 };
    expect(viewOpOfQuery("v", "/api/v1/pods", viewQuery(op))).toEqual(op);
    const anchored = { op: "view" as const, id: "v", path: "/api/v1/pods", sort: "name", anchor: "team-a/web-1", limit: 50 };
    expect(viewOpOfQuery("v", "/api/v1/pods", viewQuery(anchored))).toEqual(anchored);
    expect(viewOpOfQuery("v", "/api/v1/pods", new URLSearchParams("view=1&watch=1&offset=-1"))).toEqual({ op: "view", id: "v", path: "/api/v1/pods" });
  });

  it("turns an op into the standalone watch's query", () => {
    expect(watchQuery({ labelSelector: "a=b", resourceVersion: "5", allowWatchBookmarks: true, compact: true, timeoutSeconds: 9 }).toString()).toBe(
      "watch=1&labelSelector=a%3Db&resourceVersion=5&allowWatchBookmarks=true&compact=true&timeoutSeconds=9",
    );
    // sendInitialEvents needs resourceVersionMatch=NotOlderThan, the only value the API server takes with it.
    expect(watchQuery({ sendInitialEvents: true }).toString()).toBe("watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan");
    expect(watchQuery({ sendInitialEvents: true, resourceVersionMatch: "Exact" }).get("resourceVersionMatch")).toBe("Exact");
  });
});

describe("the socket's framing", () => {
  it("batches for the batch subprotocol, compressed for its gzip form; one line per text message for anything else", () => {
    expect(socketFraming(BATCH_PROTOCOL)).toEqual({ batched: true, compressed: false });
    expect(socketFraming(GZIP_BATCH_PROTOCOL)).toEqual({ batched: true, compressed: true });
    for (const other of [undefined, "base64.binary.k8s.io", PACED_PROTOCOL, DELTA_PROTOCOL, GZIP_DELTA_PROTOCOL]) expect(socketFraming(other)).toEqual({ batched: false, compressed: false });
  });
});

describe("relay lines", () => {
  const pod = { kind: "Pod", apiVersion: "v1", metadata: { name: "p", resourceVersion: "42" } };

  it("tag a standalone line with its id, which reads back without parsing", () => {
    const line = eventLine("ADDED", JSON.stringify(pod));
    const tagged = tagLines("w-1", line);
    expect(JSON.parse(tagged)).toEqual({ id: "w-1", type: "ADDED", object: pod });
    // Several lines at once, a newline inside a string value included (JSON escapes it).
    const odd = { ...pod, metadata: { ...pod.metadata, annotations: { note: "two\n{lines}" } } };
    const batch = eventLine("ADDED", JSON.stringify(odd)) + eventLine("BOOKMARK", JSON.stringify(pod));
    expect(
      tagLines("b", batch)
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([
      { id: "b", type: "ADDED", object: odd },
      { id: "b", type: "BOOKMARK", object: pod },
    ]);
    expect(lineId(tagged)).toBe("w-1");
    expect(lineType(line)).toBe("ADDED");
    expect(lineType(tagged)).toBe("ADDED");
    expect(lineType(closedLine("w", 1000, "", undefined))).toBe("CLOSED");
    expect(lineType(failureLine(badRequest("x")))).toBe("ERROR");
    expect(lineId(failureLine(badRequest("x")))).toBeUndefined();
    expect(JSON.parse(failureLine(badRequest("x"), "w"))).toMatchObject({ id: "w", type: "ERROR", object: { code: 400 } });
    expect(JSON.parse(closedLine("w", 4008, "slow", "7"))).toEqual({ id: "w", type: "CLOSED", code: 4008, reason: "slow", resourceVersion: "7" });
    expect(JSON.parse(closedLine("w", 1000, "unwatched", undefined))).toEqual({ id: "w", type: "CLOSED", code: 1000, reason: "unwatched" });
  });

  it("tag any lines in pieces that join to each line with its id, its rest sliced from the message", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[\w.-]{1,12}$/), fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 1, maxLength: 8 }), (id, values) => {
        const lines = values.map((v) => eventLine("MODIFIED", JSON.stringify(v)));
        const pieces = taggedPieces(id, lines.join(""));
        expect(pieces).toHaveLength(2 * lines.length);
        expect(
          pieces
            .join("")
            .split("\n")
            .slice(0, -1)
            .map((l) => JSON.parse(l) as unknown),
        ).toEqual(values.map((v) => ({ id, type: "MODIFIED", object: JSON.parse(JSON.stringify(v)) as unknown })));
      }),
    );
  });

  it("read object.metadata.resourceVersion as JSON.parse would, for any object", () => {
    const value = fc.jsonValue({ maxDepth: 3 });
    const object = fc.record(
      {
        kind: fc.string(),
        resourceVersion: fc.string(),
        spec: fc.dictionary(fc.oneof(fc.string(), fc.constant("resourceVersion"), fc.constant("metadata")), value),
        metadata: fc.record(
          { labels: fc.dictionary(fc.oneof(fc.string(), fc.constant("resourceVersion")), fc.string()), resourceVersion: fc.oneof(fc.string(), fc.integer()), name: fc.string() },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.shuffledSubarray(["kind", "resourceVersion", "spec", "metadata"]), object, fc.constantFrom("", " ", "\n  "), (order, o, space) => {
        const ordered = Object.fromEntries(order.filter((k) => k in o).map((k) => [k, (o as Record<string, unknown>)[k]]));
        const line = eventLine("MODIFIED", JSON.stringify(ordered, null, space));
        const rv = (ordered as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
        expect(resourceVersionOf(line)).toBe(typeof rv === "string" ? rv : undefined);
      }),
      { seed: 20261123, numRuns: 500 },
    );
  });

  it("page lines by the watch's limit", () => {
    const lines = "a\nb\nc\nd\ne\n";
    expect(pages(lines, undefined)).toEqual(["a\nb\nc\nd\ne\n"]);
    expect(pages(lines, 2)).toEqual(["a\nb\n", "c\nd\n", "e\n"]);
    expect(pages(lines, 1)).toEqual(["a\n", "b\n", "c\n", "d\n", "e\n"]);
    expect(pages(lines, 5)).toEqual(["a\nb\nc\nd\ne\n"]);
  });

  it("find the resume point of a batch: its last event's resourceVersion, past an ERROR", () => {
    const at = (rv: string) => eventLine("MODIFIED", JSON.stringify({ ...pod, metadata: { resourceVersion: rv } }));
    expect(lastResourceVersion(at("1") + at("2"))).toBe("2");
    expect(lastResourceVersion(at("1") + at("2") + failureLine(badRequest("gone")))).toBe("2");
    expect(lastResourceVersion(failureLine(badRequest("gone")))).toBeUndefined();
  });
});

describe("acknowledgements through the hop", () => {
  it("give each hub the count of its own messages the client has taken", () => {
    const ledger = new AckLedger<string>();
    ledger.sent(10, "a", 8); // client 10
    ledger.sent(10, "a", 16); // client 20
    ledger.sentOwn(5); // client 25: a CLOSED
    ledger.sent(10, "b", 9); // client 35
    ledger.sent(10, "a", 24); // client 45
    expect(ledger.acknowledge(9)).toEqual(new Map());
    expect(ledger.acknowledge(10)).toEqual(new Map([["a", 8]]));
    expect(ledger.acknowledge(35)).toEqual(
      new Map([
        ["a", 16],
        ["b", 9],
      ]),
    );
    expect(ledger.unacknowledged).toBe(10);
    // More than was sent is no reader's count: nothing moves.
    expect(ledger.acknowledge(100)).toEqual(new Map());
    expect(ledger.unacknowledged).toBe(10);
    expect(ledger.acknowledge(45)).toEqual(new Map([["a", 24]]));
    expect(ledger.acknowledge(45)).toEqual(new Map());
    expect(ledger.total).toBe(45);
    expect(ledger.unacknowledged).toBe(0);
  });

  it("forget what a client that never acknowledges was sent, past a bound", () => {
    const ledger = new AckLedger<string>();
    for (let i = 1; i <= 40_000; i++) ledger.sent(1, "a", i);
    // What is remembered is the latest stretch only: the oldest were dropped unacknowledged.
    const taken = ledger.acknowledge(40_000);
    expect(taken.get("a")).toBe(40_000);
    expect(ledger.acknowledge(20_000)).toEqual(new Map());
    expect(ledger.unacknowledged).toBe(0);
  });
});
