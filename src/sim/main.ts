/**
 * @module
 * `npm run sim -- --port 8001 --churn 5 --seed 1`: run one simulated API server until Ctrl-C.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { clockResourceVersion, startSimulator, RESOURCES } from "./index.ts";

const USAGE = `usage: npm run sim -- [options]
  --port N                  listen port (default 8001; 0 picks a free one)
  --host H                  listen address (default 127.0.0.1)
  --seed N                  PRNG seed for fixtures and churn (default 1)
  --churn R                 pod operations per second (default 0)
  --churn-namespaces a,b    namespaces to churn (default: the seeded ones)
  --no-events               churn records no Events (by default it records what a cluster would)
  --no-controllers          no workload controllers: Deployments, ReplicaSets and Pods change only when written
  --no-openapi              publish no OpenAPI (kubectl apply and explain need it)
  --namespaces a,b          seeded namespaces (default default,team-a,team-b,team-c)
  --pods-per-namespace N    seeded pods per namespace (default 8)
  --nodes N                 seeded nodes (default 3)
  --deployments N           deployments per namespace (default 2)
  --history-limit N         events kept for watch resume (default 10000)
  --bookmark-interval-ms N  bookmark period (default 60000)
  --token T                 require "Authorization: Bearer T"
  --tls-key FILE --tls-cert FILE   serve HTTPS`;

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8001" },
    host: { type: "string", default: "127.0.0.1" },
    seed: { type: "string", default: "1" },
    churn: { type: "string", default: "0" },
    "churn-namespaces": { type: "string" },
    events: { type: "boolean", default: true },
    controllers: { type: "boolean", default: true },
    openapi: { type: "boolean", default: true },
    namespaces: { type: "string" },
    "pods-per-namespace": { type: "string" },
    nodes: { type: "string" },
    deployments: { type: "string" },
    "history-limit": { type: "string" },
    "bookmark-interval-ms": { type: "string" },
    token: { type: "string" },
    "tls-key": { type: "string" },
    "tls-cert": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  allowNegative: true,
});

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

function number(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) {
    console.error(`--${name} must be a non-negative number, got ${JSON.stringify(value)}\n\n${USAGE}`);
    process.exit(2);
  }
  return n;
}

const list = (value: string | undefined) =>
  value
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);

if (!values["tls-key"] !== !values["tls-cert"]) {
  console.error("--tls-key and --tls-cert go together: give both PEM files, or neither for plain HTTP");
  process.exit(2);
}

const churnRate = number("churn", values.churn) ?? 0;
const churnNamespaces = list(values["churn-namespaces"]);
const sim = await startSimulator({
  port: number("port", values.port),
  host: values.host,
  seed: number("seed", values.seed),
  historyLimit: number("history-limit", values["history-limit"]),
  bookmarkIntervalMs: number("bookmark-interval-ms", values["bookmark-interval-ms"]),
  token: values.token,
  tls: values["tls-key"] && values["tls-cert"] ? { key: readFileSync(values["tls-key"], "utf8"), cert: readFileSync(values["tls-cert"], "utf8") } : undefined,
  initial: {
    namespaces: list(values.namespaces),
    podsPerNamespace: number("pods-per-namespace", values["pods-per-namespace"]),
    nodes: number("nodes", values.nodes),
    deployments: number("deployments", values.deployments),
  },
  controllers: values.controllers,
  openapi: values.openapi,
  churn: churnRate > 0 ? { ratePerSec: churnRate, events: values.events, ...(churnNamespaces ? { namespaces: churnNamespaces } : {}) } : undefined,
  // A cluster that restarts keeps going forward in resourceVersions, as etcd does.
  initialResourceVersion: clockResourceVersion(),
});

const stats = sim.stats();
console.log(`simulated Kubernetes API server (v1.34) listening on ${sim.url}`);
console.log(`  resources: ${RESOURCES.map((r) => r.id).join(", ")}`);
console.log(`  resourceVersion ${stats.resourceVersion}; churn ${stats.churn.ratePerSec}/s over ${stats.churn.namespaces.join(", ")}`);
const kubectl = `kubectl --server ${sim.url}${values.token ? ` --token ${values.token}` : ""}`;
console.log(`  try: ${kubectl} get pods -A -w`);
console.log(`  and in another shell: ${kubectl} scale deploy/web --replicas=6`);
console.log(`  control: ${sim.url}/_sim/stats, /_sim/requests, POST /_sim/{churn,config,faults,reset}, GET|PUT /_sim/users`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  console.log("stopping simulator");
  void sim.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
