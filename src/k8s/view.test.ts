import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { columnsFor } from "./table.ts";
import { applyChanges, compareValues, parseViewSpec, VIEW_COLUMNS, VIEW_LIMIT_DEFAULT, viewRowOf, windowChanges } from "./view.ts";

const PODS = columnsFor({ group: "", resource: "pods" });
const parse = (query: string) => parseViewSpec(new URLSearchParams(query), PODS);
const message = (query: string) => {
  const parsed = parse(query);
  return parsed.ok ? undefined : parsed.status.message;
};

describe("parseViewSpec", () => {
  it("reads sort keys (columns by their Table name in any case, the key's parts, labels), filters and the window", () => {
    expect(parse("sort=-Status,restarts,namespace,creationTimestamp,label:app.kubernetes.io/name&filter=name~Web,Status=Running,Restarts=3,label:tier=db&offset=100&limit=20&rows=object")).toEqual({
      ok: true,
      value: {
        sort: [
          { by: { kind: "column", index: 2 }, descending: true },
          { by: { kind: "column", index: 3 }, descending: false },
          { by: { kind: "namespace" }, descending: false },
          { by: { kind: "created" }, descending: false },
          { by: { kind: "label", key: "app.kubernetes.io/name" }, descending: false },
        ],
        filter: [
          { kind: "name", contains: "web" },
          { kind: "column", index: 2, equals: "Running" },
          { kind: "column", index: 3, equals: 3 },
          { kind: "label", key: "tier", equals: "db" },
        ],
        offset: 100,
        limit: 20,
        rows: "object",
      },
    });
  });

  it("defaults to every row in key order, the first page of cells", () => {
    expect(parse("")).toEqual({ ok: true, value: { sort: [], filter: [], offset: 0, limit: VIEW_LIMIT_DEFAULT, rows: "cells" } });
    // The Name column is the name.
    expect(parse("sort=-NAME")).toMatchObject({ ok: true, value: { sort: [{ by: { kind: "name" }, descending: true }] } });
    // A cursor instead of an offset: a namespaced object's key, or a cluster-scoped one's name.
    expect(parse("anchor=team-a/web-1")).toMatchObject({ ok: true, value: { offset: 0, anchor: "team-a/web-1" } });
    expect(parse("anchor=node-1")).toMatchObject({ ok: true, value: { anchor: "node-1" } });
  });

  it("refuses what it cannot do, saying what it can", () => {
    expect(message("sort=Colour")).toMatch(/cannot sort by "Colour": sort by one of name, namespace, creationTimestamp, Name, Ready, Status, Restarts, Age/);
    expect(message("sort=label:-bad")).toMatch(/not a label key/);
    expect(message("filter=label:a b=c")).toMatch(/not a label key/);
    expect(message("filter=Colour=red")).toMatch(/cannot filter on "Colour"/);
    // An age is relative to when it is read: a view sorts by it, and does not filter on it.
    expect(message("filter=Age=5m")).toMatch(/cannot filter on "Age": filter on one of Name, Ready, Status, Restarts, IP/);
    expect(message("filter=Running")).toMatch(/write name~<text>, <column>=<value> or label:<key>=<value>/);
    expect(message("filter=Restarts=many")).toMatch(/Restarts is a number/);
    expect(message("limit=501")).toMatch(/limit must be a whole number from 0 to 500/);
    expect(message("limit=0")).toMatch(/at least 1/);
    expect(message("offset=-1")).toMatch(/offset must be a whole number/);
    expect(message("rows=yaml")).toMatch(/rows is cells or object/);
    expect(message(`sort=${"name,".repeat(9)}`)).toMatch(/at most 8 sort keys, got 9/);
    expect(message(`filter=${"name~a,".repeat(17)}`)).toMatch(/at most 16 filter terms, got 17/);
    expect(message("anchor=team-a/web-1&offset=0")).toMatch(/offset or as anchor, not both/);
    for (const key of ["/web-1", "team-a/", "a/b/c", "x".repeat(508)]) expect(message(`anchor=${key}`)).toMatch(/is not a row's key: namespace\/name, or name/);
    expect(parse("sort=Colour")).toMatchObject({ ok: false, status: { code: 400, reason: "BadRequest" } });
  });
});

describe("viewRowOf", () => {
  it("keeps what an object is ordered by: its key's parts, creation time, labels, and its Table columns' values (counts as numbers, ages as times)", () => {
    const pod = {
      metadata: { namespace: "a", name: "web-1", creationTimestamp: "2026-01-02T03:04:05Z", labels: { app: "web" } },
      spec: { containers: [{ name: "c" }], nodeName: "n1" },
      status: { phase: "Running", podIP: "10.0.0.1", containerStatuses: [{ ready: true, restartCount: 4 }] },
    };
    const row = viewRowOf({ group: "", resource: "pods" }, "a/web-1", pod);
    const created = Date.parse("2026-01-02T03:04:05Z");
    expect(row).toMatchObject({ key: "a/web-1", namespace: "a", name: "web-1", created, labels: { app: "web" } });
    // Name, Ready, Status, Restarts, Age (youngest first), IP, Node, …
    expect(row.values.slice(0, 7)).toEqual(["web-1", "1/1", "Running", 4, -created, "10.0.0.1", "n1"]);
  });

  it("fits every built-in Table in the columns a view can order by", () => {
    for (const resource of ["pods", "nodes", "services", "deployments", "events", "jobs", "cronjobs", "persistentvolumes", "persistentvolumeclaims"]) {
      for (const group of ["", "apps", "batch"]) expect(columnsFor({ group, resource }).length).toBeLessThanOrEqual(VIEW_COLUMNS);
    }
  });
});

describe("compareValues", () => {
  it("orders as SQLite does: NULL, then numbers, then text by code point", () => {
    const values = ["b", null, 2, "a", -1, "\u{1F600}", "\uFFFF", "B", 1.5];
    expect([...values].sort(compareValues)).toEqual([null, -1, 1.5, 2, "B", "a", "b", "\uFFFF", "\u{1F600}"]);
  });
});

describe("windowChanges", () => {
  type Row = { key: string; v: number };
  const rows = fc.uniqueArray(fc.record({ key: fc.constantFrom(..."abcdefghij"), v: fc.integer({ min: 0, max: 2 }) }), { selector: (r) => r.key, maxLength: 10 });

  it("gives the changes that turn one window into the next, applied in order", () => {
    fc.assert(
      fc.property(rows, rows, (before: Row[], after: Row[]) => {
        const changes = windowChanges(
          before,
          after,
          (r) => r.key,
          (r) => r.v,
        );
        expect(applyChanges(before, changes)).toEqual(after);
        // Nothing is sent for a row that neither moved nor changed.
        const same = before.length === after.length && before.every((r, i) => r.key === after[i]?.key && r.v === after[i]?.v);
        if (same) expect(changes).toEqual([]);
      }),
      { seed: 26, numRuns: 500 },
    );
  });

  it("says a row scrolled in and out as an insertion and a removal, not a rewrite of the window", () => {
    const before = ["a", "b", "c"].map((key) => ({ key, v: 0 }));
    const after = ["b", "c", "d"].map((key) => ({ key, v: 0 }));
    expect(
      windowChanges(
        before,
        after,
        (r) => r.key,
        (r) => r.v,
      ),
    ).toEqual([
      { op: "remove", at: 0 },
      { op: "insert", at: 2, row: { key: "d", v: 0 } },
    ]);
  });
});
