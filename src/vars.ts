/**
 * @module
 * The Worker's variables, secrets and plain bindings: everything in `Env` but the Durable Object
 * namespaces. Every variable is optional here; `config.ts` turns them into typed settings with
 * defaults and says what is wrong when one is malformed. Whatever reads only these (the
 * configuration, the upstream, the front door, the hub, quota and metrics objects) imports this
 * module rather than `env.ts`, which names the Durable Object classes, so no import cycle runs
 * through the bindings. (The relay socket's object runs the relay's routes, so it takes `Env`.)
 */
import type { SECRET_NAMES, VARIABLE_NAMES } from "./var-names.ts";

/** Each variable and secret, as text, when set. */
type Settings = { [name in (typeof VARIABLE_NAMES)[number] | (typeof SECRET_NAMES)[number]]?: string };

export interface Vars extends Settings {
  /** Optional Workers Analytics Engine dataset the metrics registry also writes to. */
  ANALYTICS?: AnalyticsEngineDataset;
  ASSETS?: Fetcher;
  /** Optional fetch-only binding (Workers VPC service or a service binding) for the default cluster. */
  UPSTREAM?: Fetcher;
  /** Named clusters' tokens and bindings are looked up by the names CLUSTERS gives. */
  [name: string]: unknown;
}
