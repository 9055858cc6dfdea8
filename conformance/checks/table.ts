/**
 * @module
 * Tables (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, as kubectl asks): a list, one
 * object and (with writes) watch events come as `meta.k8s.io/v1` Tables, a row per object with a
 * cell per column, the first column the name, each row's object its metadata (or, with
 * `includeObject=Object`, the object); a watch sends the column definitions with its first event
 * only.
 */
import type { KubeObject } from "../../src/k8s/types.ts";
import { configMaps, itemPath, pathOf, type Collection } from "../collection.ts";
import type { Check, Context } from "../context.ts";
import type { Query } from "../http.ts";
import { expect } from "../outcome.ts";
import { changes, describe, eventsText, gather, list, nameOf, queryText, reached, versionOf, watch } from "../reads.ts";

/** What kubectl get sends. */
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

interface Table {
  kind?: unknown;
  apiVersion?: unknown;
  metadata?: { resourceVersion?: string };
  columnDefinitions?: Array<{ name?: unknown; type?: unknown }>;
  rows?: Array<{ cells?: unknown[]; object?: KubeObject }>;
}

export const tableCheck: Check = {
  id: "table",
  title: "as=Table: lists, objects and watch events as meta.k8s.io/v1 Tables",
  async run(ctx) {
    const objects = ctx.writer ? ctx.objects() : undefined;
    const collection = objects ? configMaps(ctx.namespace) : ctx.observed;
    const query: Query = objects ? { labelSelector: objects.selector } : {};
    const made = objects ? [await objects.create("a"), await objects.create("b")] : [];
    if (made[1]) await reached(ctx.api, collection, query, versionOf(made[1], "the write"));

    const listed = await tableOf(ctx, pathOf(collection), query);
    const columns = checkTable(listed, "a list", "PartialObjectMetadata");
    if (objects) {
      const names = (listed.rows ?? []).map((r) => nameOf(r.object ?? {})).sort();
      expect(JSON.stringify(names) === JSON.stringify(made.map(nameOf).sort()), `the Table of the check's objects has rows ${names.join(", ") || "none"}`);
    }
    const first = listed.rows?.[0]?.object;
    let rest = "";
    if (first) {
      checkTable(await tableOf(ctx, pathOf(collection), { ...query, includeObject: "Object" }), "a list with includeObject=Object", collection.kind);
      // A relay may serve a get from what it holds of the whole namespace: held as of the writes too.
      if (made[1]) await reached(ctx.api, collection, {}, versionOf(made[1], "the write"));
      const one = await tableOf(ctx, itemPath(collection, first.metadata?.namespace, nameOf(first)), {});
      checkTable(one, "an object", "PartialObjectMetadata");
      expect(one.rows?.length === 1 && nameOf(one.rows[0]?.object ?? {}) === nameOf(first), `the Table of object ${nameOf(first)} does not have its one row`);
      rest = ", an object, includeObject=Object";
    }
    if (objects) {
      await watchTable(ctx, collection, query, async () => [await objects.update("a"), await objects.update("b")]);
      rest += ", and watch events (column definitions on the first only)";
    }
    return `a list as a meta.k8s.io/v1 Table (${columns.join(", ")}; ${listed.rows?.length ?? 0} rows)${rest}`;
  },
};

async function tableOf(ctx: Context, path: string, query: Query): Promise<Table> {
  const reply = await ctx.api.get(path, query, TABLE);
  expect(reply.status === 200, () => `GET ${path}${queryText(query)} as a Table answered ${describe(reply)}`);
  return reply.json as Table;
}

/** The Table's shape; returns its column names. */
function checkTable(table: Table, what: string, objectKind: string, withColumns = true): string[] {
  expect(table?.kind === "Table" && table.apiVersion === "meta.k8s.io/v1", `${what} as a Table is ${String(table?.apiVersion)}/${String(table?.kind)}, not meta.k8s.io/v1 Table`);
  expect(typeof table.metadata?.resourceVersion === "string", `${what} as a Table has no metadata.resourceVersion`);
  const columns = (table.columnDefinitions ?? []).map((c) => String(c.name));
  if (withColumns) expect(columns[0] === "Name", `${what} as a Table has columns ${columns.join(", ") || "none"}, the first not Name`);
  else expect(columns.length === 0, `${what} as a Table repeats the column definitions (${columns.join(", ")}): a watch sends them with its first event only`);
  expect(Array.isArray(table.rows), `${what} as a Table has no rows array`);
  for (const row of table.rows) {
    const name = nameOf(row.object ?? {});
    expect(row.object?.kind === objectKind, `a row of ${what} as a Table holds a ${String(row.object?.kind)}, not a ${objectKind}`);
    if (withColumns)
      expect(
        Array.isArray(row.cells) && row.cells.length === columns.length,
        `row ${name} of ${what} as a Table has ${Array.isArray(row.cells) ? row.cells.length : "no"} cells for ${columns.length} columns`,
      );
    expect(Array.isArray(row.cells) && row.cells[0] === name, `row ${name} of ${what} as a Table starts with ${JSON.stringify(row.cells?.[0])}, not its name`);
  }
  return columns;
}

/** A Table watch: each event a Table of one row, the first with the column definitions. */
async function watchTable(ctx: Context, collection: Collection, query: Query, write: () => Promise<KubeObject[]>): Promise<void> {
  const start = (await list(ctx.api, collection, query)).metadata.resourceVersion;
  const stream = await watch(ctx.api, collection, { ...query, resourceVersion: start }, ctx.defer, TABLE);
  const written = await write();
  const lastName = nameOf(written.at(-1)!);
  const events = (await gather(stream, 15_000, (e) => e.type === "ERROR" || (e.object as Table).rows?.some((r) => nameOf(r.object ?? {}) === lastName) === true)).events;
  const got = changes(events);
  expect(got.length === written.length, () => `a Table watch got ${got.length} events for ${written.length} changes: ${eventsText(got)}`);
  got.forEach((event, i) => {
    const table = event.object as Table;
    checkTable(table, `watch event ${i + 1}`, "PartialObjectMetadata", i === 0);
    expect(table.rows?.length === 1 && nameOf(table.rows[0]?.object ?? {}) === nameOf(written[i]!), `watch event ${i + 1} as a Table is not the one row of ${nameOf(written[i]!)}`);
  });
}
