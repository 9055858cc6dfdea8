/**
 * `npm start`: the relay on http://127.0.0.1:8787 (PORT to change), relaying UPSTREAM_URL or,
 * without it, a simulated cluster with churn started here. Every relay variable set in this
 * process's environment reaches the Worker. Ctrl-C stops everything this started.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimulator, type Simulator } from "../src/sim/index.ts";

/** Worker variables passed through from the environment; secrets go in a temp env file so wrangler does not print them. */
const VARIABLES = [
  "UPSTREAM_URL", "CLUSTERS", "AUTH_MODE", "ALLOWED_ORIGINS", "DENY_RESOURCES", "WINDOW_EVENTS", "WINDOW_BYTES",
  "SUBSCRIBER_BUDGET_BYTES", "BOOKMARK_INTERVAL_SECONDS", "UPSTREAM_STALL_SECONDS", "IDLE_GRACE_SECONDS", "MAX_HUBS",
  "MAX_SUBSCRIPTIONS_PER_SUBJECT", "AUTH_RECHECK_SECONDS", "STRIP_MANAGED_FIELDS",
];
const SECRETS = ["UPSTREAM_TOKEN", "AUTH_JWT_SECRET"];

const port = Number(process.env.PORT ?? 8787);
const host = "127.0.0.1";
const say = (line: string) => console.log(`[start] ${line}`);

let sim: Simulator | undefined;
let relay: ChildProcess | undefined;
const work = mkdtempSync(join(tmpdir(), "kube-watch-relay-"));

async function main(): Promise<void> {
  const env: Record<string, string> = {};
  for (const name of [...VARIABLES, ...SECRETS]) if (process.env[name]) env[name] = process.env[name] as string;

  if (!env.UPSTREAM_URL) {
    sim = await startSimulator({ port: Number(process.env.SIM_PORT ?? 0), churn: { ratePerSec: Number(process.env.SIM_CHURN ?? 2) } });
    env.UPSTREAM_URL = sim.url;
    say(`simulated cluster at ${sim.url} (churn ${process.env.SIM_CHURN ?? 2} changes/s; SIM_CHURN to change)`);
  } else {
    say(`relaying the cluster at ${env.UPSTREAM_URL}`);
  }
  env.AUTH_MODE ??= "none";
  if (env.AUTH_MODE === "none") say("WARNING: AUTH_MODE=none: anyone who can reach the relay can watch everything it relays; it listens on loopback only");

  const envFile = join(work, "relay.env");
  writeFileSync(envFile, SECRETS.filter((s) => env[s]).map((s) => `${s}=${JSON.stringify(env[s])}`).join("\n") + "\n", { mode: 0o600 });
  const vars = Object.entries(env)
    .filter(([name]) => !SECRETS.includes(name))
    .flatMap(([name, value]) => ["--var", `${name}:${value}`]);
  // A simulated cluster starts from scratch each time, so the relay's state must too; a real
  // cluster's relay keeps its state (and so its replay window) across restarts.
  const persist = sim ? ["--persist-to", join(work, "state")] : process.env.PERSIST_DIR ? ["--persist-to", process.env.PERSIST_DIR] : [];

  relay = spawn(
    "wrangler",
    ["dev", "--ip", host, "--port", String(port), "--show-interactive-dev-session=false", "--env-file", envFile, ...persist, ...vars],
    // Its own process group, so stopping it stops workerd too, whoever signalled us.
    { stdio: ["ignore", "inherit", "inherit"], detached: true, env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" } },
  );
  relay.on("exit", (code, signal) => {
    say(`relay exited (${signal ?? code})`);
    void shutdown(code ?? 1);
  });
  say(`relay is wrangler dev, pid ${relay.pid} (its own process group)`);

  const url = `http://${host}:${port}`;
  await waitFor(`${url}/version`);
  say(`relay ready at ${url}`);
  say(`  open ${url}/ in a browser, or try:`);
  say(`  curl -N '${url}/api/v1/pods?watch=1'`);
  say(`  kubectl --server ${url} get pods -A -w`);
}

async function waitFor(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the relay did not answer ${url} within 60 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let stopping = false;
async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (relay?.pid !== undefined && relay.exitCode === null && relay.signalCode === null) {
    const exited = once(relay, "exit");
    const group = -relay.pid;
    signal(group, "SIGTERM");
    const force = setTimeout(() => signal(group, "SIGKILL"), 5000);
    await exited;
    clearTimeout(force);
  }
  await sim?.close();
  rmSync(work, { recursive: true, force: true });
  process.exit(code);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

// Whoever started us may die without signalling us (npm does not forward SIGTERM): orphaned,
// we would keep the relay and its port. Stop when the parent is gone.
const parent = process.ppid;
setInterval(() => process.ppid !== parent && void shutdown(0), 1000).unref();

process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));
process.on("SIGHUP", () => void shutdown(0));
main().catch((error: unknown) => {
  console.error(`[start] ${(error as Error).message}`);
  void shutdown(1);
});
