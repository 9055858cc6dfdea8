import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteLines, eventVersion, isAdded, isErrorEvent, isModified, socketLine, writtenAt } from "../../bench/lines.ts";
import { deltaLine } from "../../src/k8s/delta.ts";
import { closedLine } from "../../src/k8s/mux.ts";
import { WRITTEN_AT } from "../../src/sim/store.ts";
import type { KubeObject } from "../../src/k8s/types.ts";

const pod = (rv: number, phase: string): KubeObject => ({
  kind: "Pod",
  apiVersion: "v1",
  metadata: { name: "web-1", namespace: "ns", uid: "u1", resourceVersion: String(rv), annotations: { [WRITTEN_AT]: String(1_700_000_000_000 + rv) } },
  status: { phase },
});
const eventOf = (type: string, object: KubeObject) => `{"type":"${type}","object":${JSON.stringify(object)}}`;

describe("ByteLines", () => {
  it("gives the same lines however the stream is cut into chunks", () => {
    const line = fc.string({ unit: fc.constantFrom("a", "é", "{", "\n"), maxLength: 40 });
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 30 }), (texts, cuts) => {
        const bytes = Buffer.from(texts.map((t) => `${t}\n`).join(""));
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const got: string[] = [];
        const terminated: string[] = [];
        const lines = new ByteLines();
        let from = 0;
        for (const to of [...at, bytes.length]) {
          lines.push(bytes.subarray(from, to), (l, t) => {
            got.push(l.toString());
            terminated.push(t.toString());
          });
          from = to;
        }
        const expected = bytes
          .toString()
          .split("\n")
          .filter((l) => l.length > 0);
        expect(got).toEqual(expected);
        expect(terminated).toEqual(expected.map((l) => `${l}\n`));
      }),
      { seed: 17, numRuns: 300 },
    );
  });
});

describe("reading an event's numbers from its bytes", () => {
  it("reads a whole event's resourceVersion and write stamp", () => {
    const line = Buffer.from(eventOf("MODIFIED", pod(41, "Running")));
    expect(eventVersion(line)).toBe(41);
    expect(writtenAt(line)).toBe(1_700_000_000_041);
    expect(isModified(line)).toBe(true);
    expect(isAdded(line)).toBe(false);
    expect(isErrorEvent(line)).toBe(false);
    expect(isAdded(Buffer.from(eventOf("ADDED", pod(43, "Pending"))))).toBe(true);
  });

  it("reads a delta's new resourceVersion from its patch, not the one it patches", () => {
    const full = `${eventOf("MODIFIED", pod(42, "Succeeded"))}\n`;
    const delta = deltaLine(pod(41, "Running"), pod(42, "Succeeded"), `${full}${" ".repeat(1000)}`);
    expect(delta).toBeDefined();
    const line = Buffer.from((delta as string).trimEnd());
    expect(eventVersion(line)).toBe(42);
    expect(writtenAt(line)).toBe(1_700_000_000_042);
    expect(isModified(line)).toBe(true);
  });

  it("tells a relay socket's tagged lines apart, even with a long id", () => {
    const error = Buffer.from(`{"id":"1234","type":"ERROR","object":{"kind":"Status","code":410}}`);
    expect(isErrorEvent(error)).toBe(true);
    expect(socketLine(error)).toEqual({ id: 1234, closed: false, slow: false });
    const closed = Buffer.from(closedLine("7", 4008, "too slow", "41"));
    expect(socketLine(closed)).toEqual({ id: 7, closed: true, slow: true });
    expect(isModified(Buffer.from(`{"id":"12","type":"MODIFIED","object":{}}`))).toBe(true);
  });

  it("gives 0 for a line without the numbers", () => {
    const bookmark = Buffer.from(`{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{}}}`);
    expect(eventVersion(bookmark)).toBe(0);
    expect(writtenAt(bookmark)).toBe(0);
  });
});
