/**
 * @module
 * What `npm start` and `npm run dev` relay when no `UPSTREAM_URL` is given: the simulated
 * cluster, which takes kubectl's writes (its controllers keep Deployments, ReplicaSets and Pods
 * consistent, and it publishes OpenAPI for `kubectl apply` and `kubectl explain`), with churn (`SIM_CHURN` changes a second, 2 by default, on `SIM_PORT` or a free port),
 * and with `SIM_CLUSTERS=east,west` more of them, named (the relay's `CLUSTERS`), to watch as one
 * and its Events, its resourceVersions counted from the clock (so clients that outlive a
 * restart hold resourceVersions of the last run, as after an API server's), and, in `kube` mode,
 * users to try it with, so kube mode can be tried without reading the simulator's source: one
 * who may read pods and Events in one namespace, one who may read everything. Their tokens are
 * new at every start; the relay never sees them until a client presents one, and asks the
 * cluster about them as it would about any token. The relay's variables come from the
 * environment, as `relayEnvironment` picks them.
 */
import { randomBytes } from "node:crypto";
import { clockResourceVersion, startSimulator, type Simulator, type User } from "../src/sim/index.ts";
import { SECRET_NAMES, VARIABLE_NAMES } from "../src/var-names.ts";

export interface DemoUser extends User {
  /** What the user may read, in words. */
  may: string;
  /** A namespace the user may read pods in, and whether across all namespaces too. */
  namespace: string;
  everywhere: boolean;
}

const READ = ["get", "list", "watch"];
const token = (name: string) => `sim-${name}-${randomBytes(18).toString("base64url")}`;

export function demoUsers(): DemoUser[] {
  return [
    {
      name: "alice",
      tokens: [token("alice")],
      rules: [{ verbs: READ, apiGroups: [""], resources: ["pods", "events"], namespaces: ["team-a"] }],
      may: "pods and Events in team-a, nothing else",
      namespace: "team-a",
      everywhere: false,
    },
    {
      name: "bob",
      tokens: [token("bob")],
      rules: [{ verbs: READ, apiGroups: ["*"], resources: ["*"] }],
      may: "everything, in every namespace (but Secrets, which the relay never relays)",
      namespace: "team-a",
      everywhere: true,
    },
  ];
}

export interface DemoCluster {
  /** The cluster relayed as `default` (`/api/…`, `/clusters/default/…`). */
  sim: Simulator;
  /** More simulated clusters by name (`SIM_CLUSTERS`), relayed as `/clusters/<name>/…` and, with the first, as `/clusters/*` / …. */
  more: Map<string, Simulator>;
  /** `kube` mode's users, with their tokens. */
  users: DemoUser[] | undefined;
  /** What was started, in a line. */
  summary: string;
  close(): Promise<void>;
}

/** The names in `SIM_CLUSTERS` (`east,west`): each a DNS label, none `default`, none twice; a mistake is an Error saying what to write. */
export function simClusterNames(value: string | undefined): string[] {
  const names = (value ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  for (const name of names) {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name)) throw new Error(`SIM_CLUSTERS: "${name}" is not a cluster name (lower-case letters, digits and '-', as in SIM_CLUSTERS=east,west)`);
    if (name === "default") throw new Error(`SIM_CLUSTERS: "default" is the first simulated cluster already; name the others (SIM_CLUSTERS=east,west)`);
  }
  if (new Set(names).size !== names.length) throw new Error(`SIM_CLUSTERS: a name is there twice (${value})`);
  return names;
}

export async function startDemoCluster(authMode: string, env: NodeJS.ProcessEnv = process.env): Promise<DemoCluster> {
  const names = simClusterNames(env.SIM_CLUSTERS);
  const users = authMode === "kube" ? demoUsers() : undefined;
  const churn = env.SIM_CHURN ?? "2";
  const start = (port: number) =>
    startSimulator({
      port,
      churn: { ratePerSec: Number(churn), events: true },
      initialResourceVersion: clockResourceVersion(),
      openapi: true,
      controllers: true,
      ...(users ? { users } : {}),
    });
  const sim = await start(Number(env.SIM_PORT ?? 0));
  const more = new Map<string, Simulator>();
  const close = async () => void (await Promise.all([sim, ...more.values()].map((s) => s.close())));
  try {
    for (const name of names) more.set(name, await start(0));
  } catch (e) {
    await close();
    throw e;
  }
  const others = [...more].map(([name, s]) => `${name} at ${s.url}`).join(", ");
  const summary =
    `simulated cluster at ${sim.url} (churn ${churn} changes/s; SIM_CHURN to change)${users ? `, with demo users ${users.map((u) => u.name).join(" and ")}` : ""}` +
    (others ? `; simulated clusters ${others} (SIM_CLUSTERS), all of them as one at /clusters/*/…` : "");
  return { sim, more, users, summary, close };
}

/**
 * The relay's environment with its upstream settled, as `npm start` and `npm run dev` both need
 * it: `AUTH_MODE` none unless set, and without `UPSTREAM_URL` a simulated cluster started for it
 * (said on `say`, as is the cluster relayed otherwise).
 */
export async function relayUpstream(
  say: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ vars: Record<string, string> & { AUTH_MODE: string; UPSTREAM_URL: string }; secrets: Record<string, string>; cluster: DemoCluster | undefined }> {
  const { vars, secrets } = relayEnvironment(env);
  const authMode = vars.AUTH_MODE ?? "none";
  if (vars.UPSTREAM_URL) {
    say(`relaying the cluster at ${vars.UPSTREAM_URL}`);
    return { vars: { ...vars, AUTH_MODE: authMode, UPSTREAM_URL: vars.UPSTREAM_URL }, secrets, cluster: undefined };
  }
  if (env.SIM_CLUSTERS && vars.CLUSTERS) throw new Error("SIM_CLUSTERS and CLUSTERS are both set: SIM_CLUSTERS makes CLUSTERS for the simulated clusters it starts; set one of them");
  const cluster = await startDemoCluster(authMode, env);
  say(cluster.summary);
  const members = Object.fromEntries([...cluster.more].map(([name, sim]) => [name, { url: sim.url }]));
  const clusters: Record<string, string> = cluster.more.size > 0 ? { CLUSTERS: JSON.stringify(members) } : {};
  return { vars: { ...vars, ...clusters, AUTH_MODE: authMode, UPSTREAM_URL: cluster.sim.url }, secrets, cluster };
}

/** The secrets `CLUSTERS` names (`tokenSecret`), passed as the others are; a malformed `CLUSTERS` is the relay's to report. */
function clusterSecrets(clusters: string | undefined): string[] {
  try {
    return Object.values(JSON.parse(clusters ?? "{}") as Record<string, { tokenSecret?: unknown } | null>).flatMap((c) => (typeof c?.tokenSecret === "string" ? [c.tokenSecret] : []));
  } catch {
    return [];
  }
}

/** The relay's variables and secrets set in `env` (`src/var-names.ts`, and the token secrets `CLUSTERS` names). */
function relayEnvironment(env: NodeJS.ProcessEnv = process.env): { vars: Record<string, string>; secrets: Record<string, string> } {
  const pick = (names: readonly string[]) => Object.fromEntries(names.filter((n) => env[n]).map((n) => [n, env[n] as string]));
  return { vars: pick(VARIABLE_NAMES), secrets: pick([...SECRET_NAMES, ...clusterSecrets(env.CLUSTERS)]) };
}
