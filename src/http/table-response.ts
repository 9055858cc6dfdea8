/**
 * @module
 * kubectl's Tables, made in the Worker on the way out of a hub: a list, one object or an NDJSON
 * watch stream of plain JSON becomes its `meta.k8s.io` Table form. The hub serialises each event
 * once for all its subscribers; the few Table subscribers pay for their own conversion here,
 * off the hub's single thread. Errors (`Status` bodies, `ERROR` events) pass through unchanged,
 * as the API server never converts a Status (apiserver `handlers/response.go`).
 */
import { eventLine } from "../k8s/event.ts";
import { LineSplitter } from "../k8s/ndjson.ts";
import { ListItems } from "../k8s/list-items.ts";
import { tableHead, tableRow, toTable, type TableOptions, type TableResource } from "../k8s/table.ts";
import type { KubeList, KubeObject, WatchEvent } from "../k8s/types.ts";
import type { ResourceVerb } from "./resource-resolver.ts";

export interface TableRequest extends TableOptions {
  /** The negotiated media type, echoed as the response's Content-Type. */
  contentType: string;
}

/** The Table form of a hub's answer to `verb`. */
export async function tableResponse(response: Response, verb: ResourceVerb, resource: TableResource, table: TableRequest): Promise<Response> {
  if (response.status !== 200 || !response.body) return response;
  const headers = new Headers(response.headers);
  headers.set("content-type", table.contentType);
  headers.delete("content-length");
  if (verb === "watch") return new Response(response.body.pipeThrough(tableEvents(resource, table)), { status: 200, headers });
  if (verb === "list") return new Response(response.body.pipeThrough(new TextDecoderStream()).pipeThrough(tableRows(resource, table)), { status: 200, headers });
  // A single object's Table carries the object's resourceVersion (printers `ConvertToTable`).
  const object = (await response.json()) as KubeObject;
  const body = toTable(resource, [object], { resourceVersion: object.metadata?.resourceVersion ?? "" }, table);
  return new Response(`${JSON.stringify(body)}\n`, { status: 200, headers });
}

/**
 * A list as a Table, a row at a time as its items arrive: a list of any size costs the Worker
 * one item, not the list (an isolate has 128 MB; 200,000 pods are 700 MB of JSON).
 */
export function tableRows(resource: TableResource, table: TableOptions): TransformStream<string, Uint8Array> {
  const items = new ListItems();
  const encoder = new TextEncoder();
  let list: { kind: string; apiVersion: string } | undefined;
  let rows = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const pieces = items.push(chunk);
      let out = "";
      if (pieces.head) {
        list = { kind: String(pieces.head.kind ?? ""), apiVersion: String(pieces.head.apiVersion ?? "") };
        const head = JSON.stringify(tableHead(resource, (pieces.head.metadata as object | undefined) ?? {}, table));
        out += `${head.slice(0, -1)},"rows":[`;
      }
      const now = Date.now();
      for (const text of pieces.items) {
        const item = JSON.parse(text) as KubeObject;
        const object = table.includeObject === "Object" && list ? withType(item, list) : item;
        out += (rows++ > 0 ? "," : "") + JSON.stringify(tableRow(resource, object, table, now));
      }
      if (out) controller.enqueue(encoder.encode(out));
    },
    flush(controller) {
      controller.enqueue(encoder.encode("]}\n"));
    },
  });
}

/**
 * Watch events as Tables of one row: column definitions on the first event only, `null` on
 * every later one (apiserver `watchEmbeddedEncoder`). BOOKMARKs are converted too, as the API
 * server converts every event's object; each hub chunk stays one chunk, so nothing is held back.
 */
export function tableEvents(resource: TableResource, table: TableOptions): TransformStream<Uint8Array, Uint8Array> {
  const lines = new LineSplitter();
  const encoder = new TextEncoder();
  let withHeaders = true;
  return new TransformStream({
    transform(chunk, controller) {
      let out = "";
      for (const line of lines.push(chunk)) {
        const event = JSON.parse(line) as WatchEvent;
        if (event.type === "ERROR") {
          out += `${line}\n`;
          continue;
        }
        const metadata = { resourceVersion: event.object.metadata?.resourceVersion ?? "" };
        out += eventLine(event.type, JSON.stringify(toTable(resource, [event.object], metadata, table, withHeaders)));
        withHeaders = false;
      }
      if (out) controller.enqueue(encoder.encode(out));
      // Only blank lines (the hub's keep-alive): passed on, so this stream's client is written to as well.
      else if (lines.pending === 0) controller.enqueue(chunk);
    },
  });
}

/** Built-in list items carry no kind or apiVersion; with `includeObject=Object` a row's object does (the API server converts it). */
function withType(item: KubeObject, list: Pick<KubeList, "kind" | "apiVersion">): KubeObject {
  if (item.kind && item.apiVersion) return item;
  return { kind: list.kind.replace(/List$/, ""), apiVersion: list.apiVersion, ...item };
}
