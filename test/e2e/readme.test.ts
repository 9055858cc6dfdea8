/**
 * What a newcomer pastes works as printed: each shell block of README.md and docs/ marked
 * `<!-- example -->` (or `<!-- example: after "npm start" -->`, for a block run against a relay
 * the reader started already, in another terminal) is run line by line in one shell session, as
 * a reader would, its `npm start -- --detach` too, with no wait of the test's own between lines;
 * before the block's `npm stop`, so is every command that `npm start` printed. Each block gets
 * its own port (`PORT=0` in its environment: the kernel picks one as the relay binds, and the
 * relay prints it) and state directory (`PERSIST_DIR`), and its own HOME and kubeconfig; the
 * page's `127.0.0.1:8787` and `.wrangler/state` are those. A command
 * that watches (`watch=1`, `-w`) must print a first good line, then is stopped; any other must
 * succeed, and a `curl` must not have been answered with a failure Status.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { LineReader } from "../kit/lines.ts";
import { have } from "../kit/tools.ts";
import { launch, processExit, relayReady, waitForOutput, type RunningRelay } from "./harness.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const toolsHere = have("kubectl", "the README's examples") && have("curl", "the README's examples") && have("openssl", "the README's examples");

interface Example {
  /** Where the block starts (`README.md:32`, `docs/auth.md:18`), to name it. */
  at: string;
  /** What the reader started before the block, if anything (`npm start`). */
  after?: string;
  commands: string[];
}

/**
 * A page's marked shell blocks, each as its commands (continuations joined, comment lines
 * dropped). Every shell block stands under a marker: `<!-- example -->` and `<!-- example: after
 * "npm start" -->` are run; `<!-- not run: why -->` says why one cannot be here (a cluster of the
 * reader's own, a Cloudflare account).
 */
function examples(file: string, text: string): Example[] {
  const found: Example[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```sh$/.exec(lines[i]!);
    if (!fence) continue;
    const above = lines[i - 1]?.slice(fence[1]!.length) ?? "";
    if (/^<!-- not run: .+ -->$/.test(above)) continue;
    const marker = /^<!-- example(?:: after "([^"]+)")? -->$/.exec(above);
    if (!marker || fence[1] !== "")
      throw new Error(`${file}:${i + 1}: a shell block stands under <!-- example -->, <!-- example: after "npm start" --> (at the start of a line) or <!-- not run: why -->`);
    const commands: string[] = [];
    let pending = "";
    for (let j = i + 1; lines[j] !== "```"; j++) {
      if (j >= lines.length) throw new Error(`${file}:${i + 1}: the example's block never ends`);
      const line = lines[j]!;
      if (line.trim() === "" || line.trim().startsWith("#")) continue;
      pending += line.endsWith("\\") ? `${line.slice(0, -1)} ` : line;
      if (line.endsWith("\\")) continue;
      commands.push(pending.trim());
      pending = "";
    }
    found.push({ at: `${file}:${i}`, ...(marker[1] ? { after: marker[1] } : {}), commands });
  }
  return found;
}

/** `[VAR=value ...] npm start[ -- --detach]`: its variables, or `undefined` for any other command. */
function startLine(command: string): Record<string, string> | undefined {
  const match = /^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)npm start(?: -- --detach)?$/.exec(command);
  if (!match) return undefined;
  return Object.fromEntries(
    (match[1] ?? "")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((word) => word.split("=", 2) as [string, string]),
  );
}

/** `[export ]NAME=...`: the variable it sets. */
const assigned = (command: string): string | undefined => /^(?:export\s+)?([A-Z_][A-Z0-9_]*)=\S/.exec(command)?.[1];

/** A command that keeps printing until stopped: a watch, a followed log. */
const watches = (command: string): boolean => /watch=1|follow=true|\s-[wf](\s|$)/.test(command);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `command` in bash with `env`: to its end, or (a watch) until its first line, then stopped. */
function run(command: string, env: NodeJS.ProcessEnv, firstLineOnly: boolean, ms = 60_000): Promise<Ran & { first?: string }> {
  const child = spawn("bash", ["-c", command], { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const stop = () => {
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      // gone already
    }
  };
  const stdout = new LineReader(child.stdout, stop);
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const deadline = setTimeout(stop, ms);
  return (async () => {
    try {
      if (firstLineOnly) {
        const first = await stdout
          .untilLine((line) => line.trim() !== "", `a first line from ${command}`, 45_000)
          .then(
            (lines) => lines.at(-1),
            () => undefined,
          );
        stop();
        await exited;
        return { code: null, stdout: stdout.lines.join("\n"), stderr, first };
      }
      const code = await exited;
      return { code, stdout: stdout.lines.join("\n"), stderr };
    } finally {
      clearTimeout(deadline);
    }
  })();
}

/** A shell session: variables set by earlier commands are there for later ones. */
class Session {
  readonly env: NodeJS.ProcessEnv;
  constructor(env: NodeJS.ProcessEnv) {
    this.env = { ...env };
  }

  async do(command: string): Promise<string> {
    if (startLine(command) !== undefined) {
      // A relay's start, in the background: it returns once the relay is ready, having printed what to try.
      const result = await run(command, this.env, false, 120_000);
      expect([command, result.code], `${result.stdout}\n${result.stderr}`).toEqual([command, 0]);
      return result.stdout;
    }
    const name = assigned(command);
    if (name) {
      const result = await run(`${command}\nprintf '%s\\n' "$${name}"`, this.env, false);
      succeeded(command, result);
      expect(result.stdout, command).not.toBe("");
      this.env[name] = result.stdout;
      return result.stdout;
    }
    if (watches(command)) {
      const result = await run(command, this.env, true);
      expect(result.first, `${command} printed nothing; stderr: ${result.stderr}`).toBeDefined();
      good(command, result.first!);
      return result.stdout;
    }
    const result = await run(command, this.env, false);
    succeeded(command, result);
    if (command.startsWith("curl ")) good(command, result.stdout);
    if (command.startsWith("echo ")) expect(result.stdout, command).toMatch(/^https?:\/\/127\.0\.0\.1:\d+\/#token=\S+$/);
    return result.stdout;
  }
}

/** It exited 0, and said nothing of an error (curl's progress meter and npm run token's summary go to stderr). */
function succeeded(command: string, result: Ran): void {
  expect([command, result.code], result.stderr).toEqual([command, 0]);
  expect(result.stderr, command).not.toMatch(/error|forbidden|unauthorized|refused|denied/i);
}

/** What a command printed is not a refusal: a watch event (not an ERROR), a list, a table. */
function good(command: string, output: string): void {
  const first = output.split("\n")[0]!;
  if (first.startsWith("{")) {
    const parsed = JSON.parse(first) as { type?: string; kind?: string; status?: string; object?: { kind?: string } };
    expect(parsed.kind === "Status" || parsed.type === "ERROR", `${command}: ${first}`).toBe(false);
    // A live view opens with its window whole; a watch with an event.
    const opening = /[?&]view=1\b/.test(command) ? ["VIEW"] : ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"];
    if (watches(command)) expect(opening, `${command}: ${first}`).toContain(parsed.type);
  } else if (command.startsWith("kubectl") && !/\slogs\s/.test(command)) {
    expect(first, command).toMatch(/^(NAMESPACE\s+)?NAME\s+/);
  }
}

/** Every command a relay's start printed, in a session of its own (the reader's environment as the block left it). */
async function tryPrinted(output: string, env: NodeJS.ProcessEnv): Promise<void> {
  const printed = output.split("\n").flatMap((line) => /^\[start\] {5}(\S.*)$/.exec(line)?.[1] ?? []);
  expect(printed.length).toBeGreaterThanOrEqual(2);
  const again = new Session(env);
  for (const command of printed) await again.do(command);
}

const pages = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const blocks = pages.flatMap((page) => examples(page, readFileSync(join(ROOT, page), "utf8")));
const started: RunningRelay[] = [];
const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(started.map((relay) => relay.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe.skipIf(!toolsHere)("the shell blocks of README.md and docs/, as printed", () => {
  it("marks the examples of every mode", () => {
    const starts = blocks.map((b) => b.commands.map(startLine).find((vars) => vars !== undefined) ?? (b.after ? startLine(b.after) : undefined));
    const modes = starts.map((vars) => `${vars?.AUTH_MODE ?? "none"}${vars?.TLS === "1" ? "+TLS" : ""}`);
    expect(new Set(modes)).toEqual(new Set(["none", "jwt", "jwt+TLS", "kube+TLS"]));
  });

  for (const block of blocks) {
    const title = block.after ? `${block.at} (after ${block.after}): ${block.commands[0]}` : `${block.at}: ${block.commands.join(" ⏎ ").slice(0, 80)}`;
    it(title, async () => {
      const state = mkdtempSync(join(tmpdir(), "readme-state-"));
      const home = mkdtempSync(join(tmpdir(), "readme-home-"));
      dirs.push(state, home);
      // The relay binds a port the kernel picks (PORT=0), which it prints; the page's 8787 is that port.
      let port = 0;
      const local = (command: string) => command.replaceAll("127.0.0.1:8787", `127.0.0.1:${port}`).replaceAll(".wrangler/state", state);
      const session = new Session({ ...process.env, HOME: home, KUBECONFIG: join(home, "kubeconfig"), PORT: "0", PERSIST_DIR: state });
      /** What the relay's start printed: the commands it says work as printed. */
      let printed: string | undefined;
      let launcher: number | undefined;
      if (block.after) {
        // The reader's other terminal.
        const relay = await relayReady(launch({ ...(session.env as Record<string, string>), ...startLine(block.after) }));
        started.push(relay);
        await waitForOutput(relay.process, relay.output, "[start] Ctrl-C stops");
        printed = relay.output();
        port = relay.port;
      }
      try {
        for (const command of block.commands) {
          if (command === "npm stop") {
            expect(printed, "npm stop stops a relay the block started").toBeDefined();
            await tryPrinted(printed!, session.env);
            printed = undefined;
          }
          const output = await session.do(local(command));
          if (startLine(command) !== undefined) {
            expect(printed, "one relay a block").toBeUndefined();
            printed = output;
            launcher = Number(/launcher pid (\d+)/.exec(output)?.[1]);
            port = Number(/\[start\] relay ready at https?:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
            expect(port, output).toBeGreaterThan(0);
            // Where the reader's `npm stop` finds it.
            session.env.PORT = String(port);
          }
          if (command === "npm stop") {
            await processExit(launcher!);
            launcher = undefined;
          }
        }
        if (block.after) {
          await tryPrinted(printed!, session.env);
          await started.at(-1)!.stop();
        } else expect([launcher, printed], "a block that starts a relay stops it (npm stop), having tried what it printed").toEqual([undefined, undefined]);
      } finally {
        if (launcher !== undefined) process.kill(-launcher, "SIGTERM");
      }
    }, 180_000);
  }
});
