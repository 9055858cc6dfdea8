/**
 * Watch a collection through the relay from Node 22, printing each change and what the
 * connection does (resumes, relists). Ctrl-C stops it.
 *
 *   npm start                                   # in another terminal
 *   npx node examples/node-watch.ts http://127.0.0.1:8787/api/v1/pods
 *   RELAY_TOKEN=... npx node examples/node-watch.ts https://relay.example/api/v1/namespaces/prod/pods?labelSelector=app%3Dweb
 *
 * Outside this repository, install the client package and import from "@kube-watch-relay/client"
 * instead (the README's "Browser and Node client" says how).
 */
import type { Pod } from "kubernetes-types/core/v1.js";
import { watch } from "../src/client/index.ts";

const url = process.argv[2] ?? "http://127.0.0.1:8787/api/v1/pods";
const stop = new AbortController();
process.once("SIGINT", () => stop.abort());

for await (const update of watch<Pod>(url, { token: process.env.RELAY_TOKEN, signal: stop.signal })) {
  switch (update.type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED": {
      const { namespace, name, resourceVersion } = update.object.metadata ?? {};
      console.log(`${update.type.padEnd(9)}${`${namespace}/${name}`.padEnd(48)}${(update.object.status?.phase ?? "").padEnd(10)}rv ${resourceVersion}`);
      break;
    }
    case "BOOKMARK":
      break; // a fresh resume point; the watch keeps it for you
    case "listed":
    case "relisted":
      console.log(`# ${update.type} ${update.items.length} objects at resourceVersion ${update.resourceVersion}`);
      break;
    case "connected":
      console.log(`# connected, ${update.resuming ? "resuming" : "watching"} from ${update.resourceVersion}`);
      break;
    case "resumed":
      console.log(`# caught up: ${update.replayed} missed events replayed`);
      break;
    case "closed":
      console.log(`# socket closed (${update.code} ${update.reason}); resuming in ${update.retryInMs} ms`);
      break;
    case "error":
      console.error(`# ${update.error.message}; retrying in ${update.retryInMs} ms`);
      break;
  }
}
