/**
 * @module
 * `npm run conformance -- --server <url> …`: the list+watch contract checked against any
 * server (the API server, `kubectl proxy`, the relay, the simulator, another proxy), a line per
 * check; exit 1 if any fails (or one declared to fail passes), 2 if it cannot run at all.
 */
import { CHECKS } from "./checks/index.ts";
import { discoverCollection } from "./collection.ts";
import type { Settings } from "./context.ts";
import { Api } from "./http.ts";
import { removeLeftovers } from "./objects.ts";
import { parseOptions, UsageError, USAGE, type Options } from "./options.ts";
import { describe } from "./reads.ts";
import { headingText, reportJson, resultLine, summaryText, type Heading } from "./report.ts";
import { chosen, failed, runChecks } from "./run.ts";

async function main(): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`${e.message}\n\n${USAGE}`);
    return 2;
  }
  if (options === "help") {
    console.log(USAGE);
    return 0;
  }
  if (options === "list") {
    for (const check of CHECKS) console.log(`${check.id.padEnd(22)}${check.title}`);
    return 0;
  }
  const checks = chosen(CHECKS, options.only, options.skip);
  const unknown = [...(options.only ?? []), ...options.skip, ...options.expectFail].filter((id) => !CHECKS.some((c) => c.id === id));
  if (unknown.length > 0) {
    console.error(`no check ${unknown.join(", ")} (--list names them)`);
    return 2;
  }

  const api = new Api(options.server);
  const writer = options.writer === options.server ? api : options.writer && new Api(options.writer);
  let heading: Heading;
  let settings: Settings;
  try {
    heading = { server: options.server.url.href, version: await serverVersion(api), writes: writesText(options) };
    settings = {
      api,
      writer,
      namespace: options.namespace,
      observed: await discoverCollection(api, options.resource, options.namespace),
      bookmarkSeconds: options.bookmarkSeconds,
      observeSeconds: options.observeSeconds,
    };
    if (writer && options.namespace) await removeLeftovers(writer, options.namespace);
  } catch (e) {
    console.error(`conformance: ${(e as Error).message}`);
    return 2;
  }

  const started = Date.now();
  if (!options.json) console.log(headingText(heading));
  const results = await runChecks(settings, checks, new Set(options.expectFail), (result) => {
    if (!options.json) console.log(resultLine(result));
  });
  let cleanup = "";
  if (writer && options.namespace) {
    try {
      await removeLeftovers(writer, options.namespace);
    } catch (e) {
      cleanup = `could not delete the suite's ConfigMaps afterwards: ${(e as Error).message}`;
    }
  }
  const ms = Date.now() - started;
  if (options.json) console.log(reportJson(heading, results, ms));
  else console.log(`\n${summaryText(results, ms)}`);
  if (cleanup) console.error(cleanup);
  return failed(results) ? 1 : 0;
}

/** What the server says it is (`/version`); also whether it can be reached at all. */
async function serverVersion(api: Api): Promise<string | undefined> {
  const reply = await api.get("/version");
  if (reply.status === 401 || reply.status === 403) throw new Error(`${api.origin}/version answered ${describe(reply)}: give a --token the server accepts`);
  return reply.status === 200 ? ((reply.json as { gitVersion?: string } | undefined)?.gitVersion ?? undefined) : undefined;
}

function writesText(options: Options): string {
  if (!options.writer) return `reads only (--allow-writes --namespace <ns> to let it write); observing ${options.resource}${options.namespace ? ` in ${options.namespace}` : ""}`;
  const through = options.writer === options.server ? "" : `, through ${options.writer.url.href}`;
  return `writes ConfigMaps in namespace ${options.namespace}${through}`;
}

process.exitCode = await main();
