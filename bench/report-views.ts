/**
 * @module
 * The views scenario in the report, and what a browser does without live views.
 */
import { windowsOf, type Results, type ViewsRow } from "./rows.ts";
import { columns, fmt, num, rowsOf, table } from "./tables.ts";

const kb = (bytes: number | null) => (bytes === null ? null : bytes / 1024);
const mb = (bytes: number) => `${num(bytes / 2 ** 20)} MB`;
const ratio = (a: number | null | undefined, b: number | null | undefined) => (a && b ? a / b : undefined);
const timesText = (times: number | undefined) => (times === undefined ? "–" : `${fmt(times)}×`);

const WINDOW_NAMES: Record<ViewsRow["measurement"], string> = {
  watch: "full watch alone",
  views: "live views",
  "socket-views": "live views over relay sockets",
  refetch: "notify-then-refetch",
};

export const viewsTable = (rows: readonly ViewsRow[]): string =>
  columns(rows, [
    ["objects", (r) => r.objects],
    ["window", (r) => WINDOW_NAMES[r.measurement]],
    ["clients", (r) => r.clients],
    ["writes/s", (r) => r.upstreamEventsPerSec],
    ["msgs/s (all clients)", (r) => r.deliveredPerSec],
    ["msgs/event (a client)", (r) => r.messagesPerEvent],
    ["with row changes/event", (r) => r.changesPerEvent],
    ["KB/min (a client)", (r) => kb(r.bytesPerClientPerMin)],
    ["full watch KB/min", (r) => kb(r.watchBytesPerMin)],
    ["full watch ÷ a client", (r) => (r.measurement === "watch" ? "–" : timesText(ratio(r.watchBytesPerMin, r.bytesPerClientPerMin)))],
    ["p50 ms", (r) => r.p50Ms],
    ["p99 ms", (r) => r.p99Ms],
    ["samples", (r) => r.latencySamples],
    ["relay CPU %", (r) => r.serverCpuPct],
    ["relay CPU µs/event", (r) => r.cpuUsPerEvent],
    ["rows written/event", (r) => r.rowsWrittenPerEvent],
    ["clients' CPU %", (r) => r.loadGenCpuPct],
    ["others' CPU %", (r) => r.otherLoadPct],
    ["errors", (r) => r.errors],
  ]);

function opensTable(row: ViewsRow): string {
  return table(
    ["sort", "filter", "first of its order ms (builds its index)", "a second window ms", "the second window on a relay socket ms", "first frame KB"],
    (row.opens ?? []).map((o) => [o.sort, o.filter ?? "–", o.coldMs, o.warmMs, o.socketMs ?? "–", o.bytes / 1024]),
  );
}

export function viewsSection(results: Results): string[] {
  const rows = rowsOf<ViewsRow>(results, "views");
  if (rows.length === 0) return [];
  const size = results.sizes.views;
  const { watch, views, socketViews, refetch } = windowsOf(rows);
  const orders = (views?.opens?.slice(0, -1) ?? []).map((o) => o.sort).join(", ");
  const out = [
    `## views`,
    `Live views of one namespace of ${num(views?.objects ?? size.objects)} pods (about 4.3 KB of JSON each), written to at ${num(size.rate)} writes a second by the bench's churn (\`bench/viewgen.ts\`: creates, deletes of what it created, label patches of pods the views show; a seeded mix that keeps the collection's size). ` +
      `The first list through the relay builds the hub (one paged upstream list); a second is timed as what a full watch's initial state costs. Then, with no view ever opened, a full watch of the collection alone (HTTP, from the hub's head) is measured under the churn: the baseline, and what a client of the whole collection receives. ` +
      `Then views' first frames are timed (HTTP live views, \`?view=1&watch=1\`, ${size.limit} rows of cells): the first view of an order makes the order's index, a second window of the same order reads through it. ` +
      `Then ${num(size.views)} live views of ${size.limit} rows (${orders}; every other five filtered by ${"`Status=Running`"}; windows at the first four offsets) are measured beside the watch, then the same views as ops on relay sockets (\`/_relay/socket\`, five a socket as a page's panels share one; a view's second window is timed that way too, on a socket already open), then ${num(size.refetchers)} notify-then-refetch clients (each told of every write, GETs its page again, \`?view=1\` without watch, one request at a time; what telling them costs is not counted). ` +
      `Latency is from a write (its \`written-at\` stamp) to the frame, page or event that carried the row it changed; \`msgs/event\` is what one client received per upstream write; \`rows written/event\` the SQLite rows the hub wrote per event it committed (from \`/_relay/stats\`), which Durable Objects bill.`,
    viewsTable(rows),
  ];
  if (views?.opens) {
    out.push(
      `The collection listed through the relay: the first list ${num(views.listColdMs ?? 0)} ms (the hub's upstream list and its storage), then ${num(views.listMs ?? 0)} ms for ${mb(views.listBytes ?? 0)}. Views' first frames at ${num(views.objects)} pods:`,
      opensTable(views),
    );
  }
  if (watch && views && refetch) out.push(comparison(watch, views, refetch));
  if (views && socketViews) out.push(overSockets(views, socketViews));
  return out;
}

function comparison(watch: ViewsRow, views: ViewsRow, refetch: ViewsRow): string {
  const perClient = (row: ViewsRow) => (row.cpuUsPerEvent !== null && watch.cpuUsPerEvent !== null && row.clients > 0 ? (row.cpuUsPerEvent - watch.cpuUsPerEvent) / row.clients : undefined);
  const [viewCost, refetchCost] = [perClient(views), perClient(refetch)];
  const times = ratio(views.watchBytesPerMin, views.bytesPerClientPerMin);
  const refetchTimes = ratio(refetch.bytesPerClientPerMin, views.bytesPerClientPerMin);
  return [
    `**A window of ${num(views.objects)} pods in a browser, three ways** (each figure from the table above).`,
    `- A full watch: the initial state, ${mb(views.listBytes ?? 0)} (listing it took the relay ${num(views.listMs ?? 0)} ms), held whole in the page, then ${num((watch.watchBytesPerMin ?? 0) / 1024)} KB a minute; every change reaches it (p99 ${num(watch.p99Ms ?? 0)} ms), and the page sorts and filters ${num(views.objects)} objects itself.`,
    `- A live view: its first frame, ${num((views.opens?.[0]?.bytes ?? 0) / 1024)} KB, then ${num((views.bytesPerClientPerMin ?? 0) / 1024)} KB a minute (${num(views.messagesPerEvent ?? 0)} frames per write, ${num(views.changesPerEvent ?? 0)} with row changes; the rest tell only the count): ${times === undefined ? "–" : `${num(times)}×`} fewer bytes than the watch once both are live, ` +
      `and a visible row's change in p50 ${num(views.p50Ms ?? 0)} ms, p99 ${num(views.p99Ms ?? 0)} ms. ` +
      (viewCost === undefined
        ? ""
        : `The relay spent ${num(views.cpuUsPerEvent ?? 0)} µs of CPU per write with ${num(views.clients)} views open against ${num(watch.cpuUsPerEvent ?? 0)} µs with none: ${num(viewCost)} µs per view per write.`),
    `- Notify-then-refetch: each client fetched ${num(refetch.deliveredPerSec / Math.max(1, refetch.clients))} pages a second, ${num((refetch.bytesPerClientPerMin ?? 0) / 1024)} KB a minute (${refetchTimes === undefined ? "–" : `${num(refetchTimes)}×`} a live view's), and saw a visible change in p50 ${num(refetch.p50Ms ?? 0)} ms, p99 ${num(refetch.p99Ms ?? 0)} ms. ` +
      (refetchCost === undefined
        ? ""
        : `The relay spent ${num(refetch.cpuUsPerEvent ?? 0)} µs per write with ${num(refetch.clients)} of them: ${num(refetchCost)} µs per client per write${viewCost ? `, ${num(refetchCost / viewCost)}× a live view's` : ""}.`),
    "",
    `Keeping the views' rows with no view open: in the full watch's window (before any view was opened, so no index made for one) the hub wrote ${num(watch.rowsWrittenPerEvent ?? 0)} SQLite rows per event and spent ${num(watch.cpuUsPerEvent ?? 0)} µs of the process's CPU per write; ` +
      `with the views' ${views.opens?.length ?? 0} orders indexed, ${num(views.rowsWrittenPerEvent ?? 0)} rows per event. Against the relay before views (no \`view_rows\`) this run has no baseline: \`npm run bench:compare\` runs the same scenarios at two revisions, and the one before views has no views scenario to run; ` +
      `its snapshot and fanout rows (\`npm run bench:compare -- --base <the commit before views> --scenarios snapshot,fanout --systems relay\`) would give the list time and CPU per event without \`view_rows\`.`,
  ].join("\n");
}

function overSockets(views: ViewsRow, sockets: ViewsRow): string {
  const opens = (views.opens ?? []).filter((o) => o.socketMs !== undefined);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  return (
    `**The same views over relay sockets**: a visible row's change in p50 ${num(sockets.p50Ms ?? 0)} ms, p99 ${num(sockets.p99Ms ?? 0)} ms, against p50 ${num(views.p50Ms ?? 0)} ms, p99 ${num(views.p99Ms ?? 0)} ms on streams of their own; ` +
    `${num(sockets.messagesPerEvent ?? 0)} frames per write a view (${num(views.messagesPerEvent ?? 0)}), ${num((sockets.bytesPerClientPerMin ?? 0) / 1024)} KB a minute a view (${num((views.bytesPerClientPerMin ?? 0) / 1024)}); ` +
    `the relay spent ${num(sockets.cpuUsPerEvent ?? 0)} µs of CPU per write (${num(views.cpuUsPerEvent ?? 0)}).` +
    (opens.length > 0
      ? ` A second window's first frame as an op on a socket already open: median ${num(median(opens.map((o) => o.socketMs ?? 0)))} ms, against ${num(median(opens.map((o) => o.warmMs)))} ms as a request of its own (a connection each).`
      : "")
  );
}
