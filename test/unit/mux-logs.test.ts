/**
 * @module
 * The relay socket's `logs` op: parsed as a pod's log path with its options as typed fields (their
 * values are the log request's to judge), and made back into the standalone log request's query.
 */
import { describe, expect, it } from "vitest";
import { lineType, logLine, logsQuery, parseClientMessage } from "../../src/k8s/mux.ts";

describe("the logs op", () => {
  it("parses a pod's log path and its options", () => {
    const message = {
      op: "logs",
      id: "l1",
      path: "/clusters/prod/api/v1/namespaces/a/pods/web-1/log",
      container: "app",
      tailLines: 0,
      timestamps: true,
      follow: false,
      sinceTime: "2026-01-01T00:00:00Z",
    };
    expect(parseClientMessage(JSON.stringify(message))).toEqual({ op: message });
    expect(logsQuery(message).toString()).toBe("container=app&tailLines=0&sinceTime=2026-01-01T00%3A00%3A00Z&timestamps=true");
    expect(logsQuery({}).toString()).toBe("follow=true");
  });

  it("refuses what is not a pod's log path, and options of the wrong type", () => {
    const refused = (message: Record<string, unknown>) => {
      const parsed = parseClientMessage(JSON.stringify({ op: "logs", id: "l1", ...message }));
      return "refused" in parsed ? parsed.refused.message : undefined;
    };
    expect(refused({ path: "/api/v1/namespaces/a/pods" })).toMatch(/path must be a pod's log path/);
    expect(refused({ path: "/api/v1/namespaces/a/pods/p/log?follow=true" })).toMatch(/path must be a pod's log path/);
    expect(refused({ path: "/api/v1/namespaces/a/services/s/log" })).toMatch(/path must be a pod's log path/);
    expect(refused({ path: "/api/v1/namespaces/a/pods/p/log", tailLines: "5" })).toBe("logs l1: tailLines must be an integer");
    expect(refused({ path: "/api/v1/namespaces/a/pods/p/log", follow: "yes" })).toBe("logs l1: follow must be true or false");
  });

  it("a log's lines as one tagged line, its text as JSON", () => {
    const line = logLine("l1", 'a "quoted"\nline\n');
    expect(line).toBe('{"id":"l1","type":"LOG","text":"a \\"quoted\\"\\nline\\n"}\n');
    expect(lineType(line.trimEnd())).toBe("LOG");
  });
});
