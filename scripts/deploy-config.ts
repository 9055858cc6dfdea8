/**
 * @module
 * Whether a deploy configuration would serve anything: an upstream to watch, an `AUTH_MODE`
 * decided (and `none` only when acknowledged), and every secret it names among the secrets the
 * deploy will have. Pure: `check-deploy.ts` gives it what wrangler read of the configuration.
 * Each problem is one line that says what to set.
 */
import { type ClusterEntry, parseClusters } from "../src/cluster-entries.ts";

export interface DeployConfiguration {
  /** `[vars]`, with `--var` overrides applied. */
  vars: Readonly<Record<string, unknown>>;
  /** The names of the Worker's fetch bindings (services, VPC services). */
  fetchBindings: ReadonlySet<string>;
  /** Secrets the deploy will have: `[secrets] required` (which wrangler deploy checks are set) and a `--secrets-file`'s names. */
  secrets: ReadonlySet<string>;
  /** `--allow-unauthenticated`: `AUTH_MODE = "none"` on purpose. */
  allowUnauthenticated: boolean;
}

const MODES = ["jwt", "kube", "none"];

/** How a secret the configuration needs is made known to the check and to wrangler deploy. */
const setSecret = (name: string) => `add "${name}" to [secrets] required in wrangler.toml and set it (npx wrangler secret put ${name}), or give it in --secrets-file`;

export function configurationProblems(config: DeployConfiguration): string[] {
  const problems: string[] = [];
  const text = (name: string) => (typeof config.vars[name] === "string" && config.vars[name] !== "" ? (config.vars[name] as string) : undefined);

  const mode = text("AUTH_MODE");
  if (mode === undefined) {
    problems.push('AUTH_MODE is not set, so the relay would answer every request 503: set AUTH_MODE = "jwt" or "kube" in [vars] (or --var AUTH_MODE:jwt)');
  } else if (!MODES.includes(mode)) {
    problems.push(`AUTH_MODE is ${JSON.stringify(mode)}: set it to "jwt" or "kube" (or "none" with --allow-unauthenticated)`);
  } else if (mode === "none" && !config.allowUnauthenticated) {
    problems.push('AUTH_MODE is "none": anyone who reaches the relay reads what its upstream identity may read; set "jwt" or "kube", or pass --allow-unauthenticated to deploy it so on purpose');
  } else if (mode === "none" && !text("ALLOWED_HOSTS")) {
    problems.push('AUTH_MODE is "none" without ALLOWED_HOSTS, so the relay answers only loopback names (against DNS rebinding) and nothing deployed: set ALLOWED_HOSTS to the relay\'s host name');
  } else if (mode === "jwt" && !config.secrets.has("AUTH_JWT_SECRET")) {
    problems.push(`AUTH_MODE is "jwt" and AUTH_JWT_SECRET is not among the deploy's secrets: ${setSecret("AUTH_JWT_SECRET")}`);
  }

  let named: ReadonlyMap<string, ClusterEntry> = new Map();
  const listed = config.vars.CLUSTERS;
  if (listed !== undefined && typeof listed !== "string") problems.push('CLUSTERS in [vars] must be a string of JSON (CLUSTERS = \'{"prod": {"binding": "PROD_VPC"}}\'), not a table');
  else {
    try {
      named = parseClusters(listed);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  const defaultUpstream = text("UPSTREAM_URL") !== undefined || config.fetchBindings.has("UPSTREAM");
  if (!defaultUpstream && named.size === 0) {
    problems.push("no upstream: set UPSTREAM_URL in [vars] (or --var UPSTREAM_URL:https://…), bind the API server as UPSTREAM (a VPC service), or name clusters in CLUSTERS");
  }
  for (const [name, entry] of named) {
    if (!entry.url && !entry.binding) problems.push(`CLUSTERS.${name} has neither url nor binding: give it one`);
    if (entry.binding && !config.fetchBindings.has(entry.binding))
      problems.push(`CLUSTERS.${name} names binding ${entry.binding}, which wrangler.toml does not bind: add it (a [[vpc_services]] or [[services]] entry)`);
    if (entry.tokenSecret && !config.secrets.has(entry.tokenSecret))
      problems.push(`CLUSTERS.${name} names tokenSecret ${entry.tokenSecret}, which is not among the deploy's secrets: ${setSecret(entry.tokenSecret)}`);
  }
  return problems;
}

/** What a summary says of the configuration: the mode, the upstreams, the secrets checked. */
export function configurationSummary(config: DeployConfiguration): string {
  const upstreams = [
    ...(config.fetchBindings.has("UPSTREAM") ? ["UPSTREAM binding"] : config.vars.UPSTREAM_URL ? [String(config.vars.UPSTREAM_URL)] : []),
    ...(typeof config.vars.CLUSTERS === "string" ? [`CLUSTERS`] : []),
  ];
  const token = config.secrets.has("UPSTREAM_TOKEN") ? "" : " (no UPSTREAM_TOKEN among the secrets: the default cluster is reached without the relay's own token)";
  return `AUTH_MODE ${String(config.vars.AUTH_MODE ?? "(unset)")}; upstream ${upstreams.join(", ") || "(none)"}${token}; secrets ${[...config.secrets].sort().join(", ") || "(none)"}`;
}

/** `KEY:VALUE`, as `wrangler deploy --var` takes it. */
export function parseVar(flag: string): [string, string] {
  const at = flag.indexOf(":");
  if (at <= 0) throw new Error(`--var takes KEY:VALUE (as wrangler deploy does), not ${JSON.stringify(flag)}`);
  return [flag.slice(0, at), flag.slice(at + 1)];
}

/** The names in a secrets file, as `wrangler deploy --secrets-file` takes it: JSON, or `NAME=value` lines. */
export function secretNames(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return Object.keys(JSON.parse(trimmed) as Record<string, unknown>);
  return trimmed
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1] ?? "")
    .filter((name) => name !== "");
}
