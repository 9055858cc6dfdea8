/**
 * `npm start`: the relay on http://127.0.0.1:8787 (PORT to change; TLS=1 for https:// with a
 * certificate made here, which kubectl needs to send a token), relaying UPSTREAM_URL or,
 * without it, a simulated cluster with churn started here (in AUTH_MODE=kube, with demo users
 * whose tokens it prints). Once ready, it prints commands that work as printed (hints.ts). Every relay variable set in this
 * process's environment reaches the Worker, secrets in memory only. The relay runs in one
 * workerd process (scripts/runtime.ts) that dies with this one, however it ends; Ctrl-C stops
 * everything this started. `npm start -- --detach` runs it in the background and returns once
 * the relay is ready; `npm stop` stops it (detached.ts).
 */
import { readFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { get as httpsGet } from "node:https";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type DemoCluster, relayUpstream } from "./demo-cluster.ts";
import { DETACHED_ENV, detach, stopCommand } from "./detached.ts";
import { hints, type HintContext } from "./hints.ts";
import { localCertificate } from "./local-tls.ts";
import { onOrphaned } from "./proc.ts";
import { HEAP_LIMIT_MB, outOfMemory } from "./heap-limit.ts";
import { startRelayRuntime, StateDirectoryInUse, type RelayRuntime } from "./runtime.ts";
import { kubeModeProblem, upstreamProblem } from "./upstream-check.ts";

/** How long workerd may take to answer /healthz, and then the relay to reach its upstream (/readyz). */
const HEALTHY_WITHIN_MS = 30_000;
const READY_WITHIN_MS = 15_000;

const host = "127.0.0.1";
const say = (line: string) => console.log(`[start] ${line}`);

let demo: DemoCluster | undefined;
let relay: RelayRuntime | undefined;

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 8787);
  const { vars, secrets, cluster } = await relayUpstream(say);
  demo = cluster;
  const users = cluster?.users;
  if (vars.AUTH_MODE === "none") say("WARNING: AUTH_MODE=none: anyone who can reach the relay can watch everything it relays; it listens on loopback only");

  const problem = (await upstreamProblem(vars.UPSTREAM_URL, secrets.UPSTREAM_TOKEN)) ?? (vars.AUTH_MODE === "kube" ? await kubeModeProblem(vars.UPSTREAM_URL) : undefined);
  if (problem) return fail(problem);

  // A simulated cluster starts from scratch each time, so the relay's state must too; a real
  // cluster's relay keeps its state (and so its replay window) across restarts, where
  // `wrangler dev` keeps it too.
  const stateDir = process.env.PERSIST_DIR ?? ".wrangler/state";
  const persistDir = demo ? undefined : stateDir;
  let tls: ReturnType<typeof localCertificate> | undefined;
  if (process.env.TLS === "1") {
    try {
      tls = localCertificate(resolve(stateDir));
    } catch (e) {
      return fail(`TLS=1: could not make a certificate with openssl (is it installed?): ${(e as Error).message}`);
    }
    say(`TLS: ${tls.made ? "made" : "reusing"} a certificate for 127.0.0.1 and localhost, signed by the CA in ${tls.caFile}`);
  }
  // A hot key's replica hubs on a thread of their own, as deployed (DESIGN.md, "Hot keys").
  const replicaWorkerd = process.env.REPLICA_WORKERD === "1";
  try {
    relay = await startRelayRuntime({ host, port, vars, secrets, persistDir, tls, replicaWorkerd, log: runtimeLog });
  } catch (e) {
    if (e instanceof StateDirectoryInUse) return fail(`${e.message}: stop it, or give this relay another PERSIST_DIR`);
    if ((e as { code?: string }).code === "ERR_ADDRESS_IN_USE") return fail(`${host}:${port} is in use: stop what listens there, or set PORT`);
    return fail(`the relay did not start: ${(e as Error).message}`);
  }
  say(`relay is workerd pid ${relay.pid} (launcher pid ${process.pid}); state ${persistDir ? `in ${persistDir}` : "temporary"}`);
  if (relay.replicaPid) say(`hot keys' replica hubs are workerd pid ${relay.replicaPid} (REPLICA_WORKERD=1), which serves the relay at ${relay.replicaUrl} too`);

  const url = relay.url;
  const ca = tls && readFileSync(tls.caFile, "utf8");
  const answers = (path: string, ms: number) => answersWithin(`${url}${path}`, ca, ms);
  if (!(await answers("/healthz", HEALTHY_WITHIN_MS))) return fail(`the relay did not answer ${url}/healthz within ${HEALTHY_WITHIN_MS / 1000} s`);
  if (!(await answers("/readyz", READY_WITHIN_MS))) {
    return fail(`the relay cannot reach the upstream at ${vars.UPSTREAM_URL} although this launcher could (its log above says why; for https://, NODE_EXTRA_CA_CERTS must name the CA)`);
  }
  say(`relay ready at ${url}`);
  for (const line of hints({ url, mode: vars.AUTH_MODE as HintContext["mode"], caFile: tls?.caFile, users, cluster: demo?.sim.url })) say(line);
  const stops = detached ? `${stopCommand(Number(new URL(url).port))} stops` : "Ctrl-C stops";
  say(`${stops} the relay${demo ? ` and the simulated cluster${demo.more.size > 0 ? "s" : ""}` : ""}`);
}

/** The runtime's lines, as they come; one saying it ran out of heap ends the relay, saying why in one line. */
function runtimeLog(line: string, level: string): void {
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
  if (!outOfMemory(line)) return;
  void fail(
    `the relay ran out of memory: its isolate reached the ${HEAP_LIMIT_MB} MB heap a Durable Object has deployed, where the object would be reset too (MINIFLARE_WORKERD_V8_FLAGS=--max-old-space-size=<MB> to try another limit locally)`,
  );
}

/** Whether `url` answers 2xx within `ms` (over https, trusting `ca`), asking every 250 ms. */
async function answersWithin(url: string, ca: string | undefined, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  const once = () =>
    new Promise<boolean>((done) => {
      const request = (ca ? httpsGet : httpGet)(url, { ca, timeout: Math.max(1, deadline - Date.now()) }, (response) => {
        response.resume();
        done((response.statusCode ?? 0) >= 200 && (response.statusCode ?? 0) < 300);
      });
      request.on("timeout", () => request.destroy());
      request.on("error", () => done(false)); // not listening yet
    });
  for (;;) {
    if (await once()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function fail(line: string): Promise<void> {
  console.error(`[start] ${line}`);
  return shutdown(1);
}

let stopping: Promise<void> | undefined;
function shutdown(code: number): Promise<void> {
  stopping ??= (async () => {
    await relay?.stop();
    await demo?.close();
    process.exit(code);
  })();
  return stopping;
}

/** Started by `--detach`: its parent returns once the relay is ready, and `npm stop` ends it. */
const detached = process.env[DETACHED_ENV] === "1";
const args = process.argv.slice(2);
if (args.length > 0 && !(args.length === 1 && args[0] === "--detach")) {
  console.error(
    `[start] npm start takes --detach (return once the relay is ready; npm stop stops it), not ${args.join(" ")}; settings are environment variables: PORT, AUTH_MODE, UPSTREAM_URL, TLS=1 (docs/configuration.md)`,
  );
  process.exit(2);
}
if (args[0] === "--detach") {
  const port = Number(process.env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0) {
    console.error(`[start] PORT must be a port number (0: one the kernel picks), not ${JSON.stringify(process.env.PORT)}`);
    process.exit(2);
  }
  process.exit(await detach(fileURLToPath(import.meta.url), port));
}

// Orphaned, we would keep the relay, the simulator and their ports (detached, that is the point).
if (!detached) onOrphaned(() => void shutdown(0));

process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));
process.on("SIGHUP", () => void shutdown(0));
main().catch((error: unknown) => fail((error as Error).message));
