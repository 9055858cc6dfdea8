/**
 * `npm run dev`: the relay as `npm start` runs it (the simulated cluster unless UPSTREAM_URL is
 * set, AUTH_MODE=none on loopback unless set, every relay variable from the environment), under
 * `wrangler dev`, which rebuilds and reloads the Worker when its source changes. Arguments go to
 * `wrangler dev` (`npm run dev -- --port 8788`); its DevTools inspector takes a free port, so two
 * started together do not both take 9229. Once wrangler says where it serves, this prints the
 * same commands `npm start` does. Ctrl-C stops wrangler and the simulated cluster.
 *
 * wrangler dev takes the Worker's variables and secrets from env files (`.dev.vars`, `.env`,
 * `--env-file`): this writes the relay's, as `npm start` would pass them, to one in a directory of
 * its own that only its user may read, deleted when it stops, and names it to wrangler (after
 * `.dev.vars`, if there is one). Not on wrangler's command line, where any local user could read
 * them, nor wrangler's whole environment, every variable of which would become a binding.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type DemoCluster, relayUpstream } from "./demo-cluster.ts";
import { hints, type HintContext } from "./hints.ts";
import { oneThreadDefaults } from "./one-thread.ts";
import { onOrphaned } from "./proc.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const WRANGLER = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");
const say = (line: string) => console.log(`[dev] ${line}`);

let demo: DemoCluster | undefined;
let envDir: string | undefined;

/**
 * `values` as a dotenv file wrangler reads as given: single-quoted (backquoted if a value holds
 * a quote), which dotenv takes literally, and `$` escaped, which wrangler would otherwise expand.
 */
function writeEnvFile(fileName: string, values: Record<string, string>): string {
  const lines = Object.entries(values).map(([name, value]) => {
    const quote = ["'", "`"].find((q) => !value.includes(q));
    if (quote === undefined) throw new Error(`${name} holds both ' and \`, which an env file for wrangler dev cannot carry: npm start can`);
    return `${name}=${quote}${value.replaceAll("$", () => "\\$")}${quote}`;
  });
  envDir ??= mkdtempSync(join(tmpdir(), "relay-dev-"));
  const file = join(envDir, fileName);
  writeFileSync(file, `${lines.join("\n")}\n`, { mode: 0o600 });
  return file;
}

async function cleanUp(): Promise<void> {
  if (envDir) rmSync(envDir, { recursive: true, force: true });
  await demo?.close();
}

async function main(): Promise<void> {
  const { vars, secrets, cluster } = await relayUpstream(say);
  demo = cluster;
  const users = cluster?.users;
  if (vars.AUTH_MODE === "none") say("WARNING: AUTH_MODE=none: anyone who can reach the relay can watch everything it relays; it answers loopback names only");

  const defaults = writeEnvFile("defaults.env", oneThreadDefaults());
  const envFile = writeEnvFile("relay.env", { ...vars, ...secrets });
  // wrangler reads .dev.vars only when no env file is named, so it is named too. A later file
  // wins: this environment over .dev.vars, and .dev.vars over one machine's defaults.
  const devVars = existsSync(join(root, ".dev.vars")) ? ["--env-file", ".dev.vars"] : [];
  const wrangler = spawn(process.execPath, [WRANGLER, "dev", "--inspector-port", "0", "--env-file", defaults, ...devVars, "--env-file", envFile, ...process.argv.slice(2)], {
    cwd: root,
    stdio: ["inherit", "pipe", "inherit"],
  });
  let ready = false;
  wrangler.stdout.on("data", (chunk: Buffer) => {
    process.stdout.write(chunk);
    const port = /Ready on https?:\/\/[^\s:]+:(\d+)/.exec(chunk.toString())?.[1];
    if (ready || port === undefined) return;
    ready = true;
    const url = `http://127.0.0.1:${port}`;
    say(`relay ready at ${url}, reloaded when its source changes`);
    for (const line of hints({ url, mode: vars.AUTH_MODE as HintContext["mode"], users, cluster: cluster?.sim.url })) say(line);
  });
  const stop = () => wrangler.kill("SIGINT");
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  process.on("SIGHUP", stop);
  onOrphaned(stop);
  wrangler.once("exit", (code, signal) => {
    void cleanUp().then(() => process.exit(code ?? (signal ? 0 : 1)));
  });
}

main().catch(async (error: unknown) => {
  console.error(`[dev] ${(error as Error).message}`);
  await cleanUp();
  process.exit(1);
});
