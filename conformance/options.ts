/**
 * @module
 * The command line: which server, with which credentials, whether and where the suite may
 * write, and which checks. Refuses what does not add up, saying why.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Endpoint } from "./http.ts";

export const USAGE = `usage: npm run conformance -- --server <url> [options]

Checks the list+watch contract of a Kubernetes API server, a relay in front of one, or
another proxy: a line per check (pass, FAIL, n/a with why); exits 1 if any check fails (or
passes where --expect-fail said it would fail), 2 if it cannot run.

  --server URL                   the server under test (kubectl proxy, the API server, the relay)
  --token TOKEN                  bearer token for it
  --ca FILE                      PEM of a CA to trust (the cluster's), beside the system's
  --insecure-skip-tls-verify     do not verify the server's certificate
  --namespace NS                 where the suite writes (and what it observes)
  --allow-writes                 let the suite create, change and delete ConfigMaps labelled
                                 conformance.kube-watch-relay.dev/suite=true in --namespace;
                                 without it, it only reads
  --writer-server URL            write through this server instead (a relay's upstream: the
                                 relay itself is read-only); --ca and --insecure-skip-tls-verify
                                 apply to it too
  --writer-token TOKEN           bearer token for --writer-server (default: --token)
  --resource NAME                what to observe without writes: plural[.group] (default configmaps)
  --bookmark-seconds N           timeoutSeconds of the watch that waits for a bookmark (default 10)
  --observe-seconds N            without writes, how long to wait for changes (default 20)
  --only ID,ID                   run only these checks (--list names them)
  --skip ID,ID                   run all but these
  --expect-fail ID,ID            checks the server is known to fail: a deviation declared, so
                                 the run can gate CI. Each that fails is reported xfail and
                                 does not fail the run; each that passes is XPASS and does, as
                                 with pytest's strict xfail: a declaration that no longer holds
                                 is to be removed, not left to hide that check's next failure.
                                 One that does not apply stays n/a. One that fails only now and
                                 then cannot be declared (it would XPASS at random): --skip it
  --list                         list the checks and exit
  --json                         the report as JSON`;

export interface Options {
  server: Endpoint;
  /** Where writes go; `undefined` without --allow-writes. */
  writer: Endpoint | undefined;
  namespace: string | undefined;
  resource: string;
  bookmarkSeconds: number;
  observeSeconds: number;
  only: string[] | undefined;
  skip: string[];
  /** Checks declared to fail (`--expect-fail`). */
  expectFail: string[];
  json: boolean;
}

export class UsageError extends Error {}

export function parseOptions(argv: string[]): Options | "help" | "list" {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return "help";
  if (values.list) return "list";
  if (!values.server) throw new UsageError("--server is required");
  const ca = values.ca === undefined ? undefined : readCa(values.ca);
  const insecure = values["insecure-skip-tls-verify"] === true;
  const server = { url: url("--server", values.server), token: values.token, ca, insecure };
  if (values["writer-server"] !== undefined && !values["allow-writes"]) throw new UsageError("--writer-server is where writes go: it needs --allow-writes");
  if (values["writer-token"] !== undefined && values["writer-server"] === undefined) throw new UsageError("--writer-token goes with --writer-server");
  if (values["allow-writes"] && !values.namespace) throw new UsageError("--allow-writes needs --namespace: the suite writes its ConfigMaps only there");
  const writer = !values["allow-writes"]
    ? undefined
    : values["writer-server"] === undefined
      ? server
      : { url: url("--writer-server", values["writer-server"]), token: values["writer-token"] ?? values.token, ca, insecure };
  return {
    server,
    writer,
    namespace: values.namespace,
    resource: values.resource ?? "configmaps",
    bookmarkSeconds: seconds("--bookmark-seconds", values["bookmark-seconds"], 10),
    observeSeconds: seconds("--observe-seconds", values["observe-seconds"], 20),
    only: values.only === undefined ? undefined : ids(values.only),
    skip: values.skip === undefined ? [] : ids(values.skip),
    expectFail: values["expect-fail"] === undefined ? [] : ids(values["expect-fail"]),
    json: values.json === true,
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    options: {
      server: { type: "string" },
      token: { type: "string" },
      ca: { type: "string" },
      "insecure-skip-tls-verify": { type: "boolean" },
      namespace: { type: "string" },
      "allow-writes": { type: "boolean" },
      "writer-server": { type: "string" },
      "writer-token": { type: "string" },
      resource: { type: "string" },
      "bookmark-seconds": { type: "string" },
      "observe-seconds": { type: "string" },
      only: { type: "string" },
      skip: { type: "string" },
      "expect-fail": { type: "string" },
      list: { type: "boolean" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** `a, b,c` as `["a", "b", "c"]`. */
const ids = (value: string): string[] =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

function url(flag: string, value: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new UsageError(`${flag} ${value} is not a URL (e.g. http://127.0.0.1:8001)`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError(`${flag} ${value}: http:// or https://`);
  return parsed;
}

function seconds(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 3 || n > 600) throw new UsageError(`${flag} must be a whole number of seconds from 3 to 600, got ${JSON.stringify(value)}`);
  return n;
}

function readCa(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`--ca ${file}: ${(e as Error).message}`);
  }
}
