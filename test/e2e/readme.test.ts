/**
 * What a newcomer pastes works as printed: each shell block of the README marked
 * `<!-- example -->` (or `<!-- example: after "npm start" -->`, for a block run against a relay
 * the reader started already) is run line by line in one shell session, as a reader would, and
 * then so is every command the `npm start` it started printed. Each block gets its own relay on
 * a free port, its own state directory and its own HOME and kubeconfig; the README's
 * `127.0.0.1:8787` and `.wrangler/state` are those. A command that watches (`watch=1`, `-w`)
 * must print a first good line, then is stopped; any other must succeed, and a `curl` must not
 * have been answered with a failure Status.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { LineReader } from "../kit/lines.ts";
import { have } from "../kit/tools.ts";
import { freePort, launch, relayReady, waitForOutput, type RunningRelay } from "./harness.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const toolsHere = have("kubectl", "the README's examples") && have("curl", "the README's examples") && have("openssl", "the README's examples");

interface Example {
  /** Where the block starts in the README, to name it. */
  line: number;
  /** What the reader started before the block, if anything (`npm start`). */
  after?: string;
  commands: string[];
}

/** The README's marked shell blocks, each as its commands (continuations joined, comment lines dropped). */
function examples(readme: string): Example[] {
  const found: Example[] = [];
  const lines = readme.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!-- example(?:: after "([^"]+)")? -->$/.exec(lines[i]!);
    if (!marker) continue;
    if (lines[i + 1] !== "```sh") throw new Error(`README.md:${i + 1}: an example marker must stand right above a \`\`\`sh block`);
    const commands: string[] = [];
    let pending = "";
    for (let j = i + 2; lines[j] !== "```"; j++) {
      if (j >= lines.length) throw new Error(`README.md:${i + 1}: the example's block never ends`);
      const text = lines[j]!;
      if (text.trim() === "" || text.trim().startsWith("#")) continue;
      pending += text.endsWith("\\") ? `${text.slice(0, -1)} ` : text;
      if (text.endsWith("\\")) continue;
      commands.push(pending.trim());
      pending = "";
    }
    found.push({ line: i + 1, ...(marker[1] ? { after: marker[1] } : {}), commands });
  }
  return found;
}

/** `[VAR=value ...] npm start [&]`: its variables, or `undefined` for any other command. */
function startLine(command: string): Record<string, string> | undefined {
  const match = /^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)npm start(?:\s*&)?$/.exec(command);
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

/** A command that keeps printing until stopped. */
const watches = (command: string): boolean => /watch=1|\s-w(\s|$)/.test(command);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `command` in bash with `env`: to its end, or (a watch) until its first line, then stopped. */
function run(command: string, env: NodeJS.ProcessEnv, firstLineOnly: boolean): Promise<Ran & { first?: string }> {
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
  const deadline = setTimeout(stop, 60_000);
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

  async do(command: string): Promise<void> {
    const name = assigned(command);
    if (name) {
      const result = await run(`${command}\nprintf '%s\\n' "$${name}"`, this.env, false);
      succeeded(command, result);
      expect(result.stdout, command).not.toBe("");
      this.env[name] = result.stdout;
      return;
    }
    if (watches(command)) {
      const result = await run(command, this.env, true);
      expect(result.first, `${command} printed nothing; stderr: ${result.stderr}`).toBeDefined();
      good(command, result.first!);
      return;
    }
    const result = await run(command, this.env, false);
    succeeded(command, result);
    if (command.startsWith("curl ")) good(command, result.stdout);
    if (command.startsWith("echo ")) expect(result.stdout, command).toMatch(/^https?:\/\/127\.0\.0\.1:\d+\/#token=\S+$/);
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
  } else if (command.startsWith("kubectl")) {
    expect(first, command).toMatch(/^(NAMESPACE\s+)?NAME\s+/);
  }
}

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const blocks = examples(readme);
const started: RunningRelay[] = [];
const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(started.map((relay) => relay.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe.skipIf(!toolsHere)("the README's examples, as printed", () => {
  it("marks the examples of every mode", () => {
    const starts = blocks.map((b) => b.commands.map(startLine).find((vars) => vars !== undefined) ?? (b.after ? startLine(b.after) : undefined));
    const modes = starts.map((vars) => `${vars?.AUTH_MODE ?? "none"}${vars?.TLS === "1" ? "+TLS" : ""}`);
    expect(new Set(modes)).toEqual(new Set(["none", "jwt", "jwt+TLS", "kube+TLS"]));
  });

  for (const block of blocks) {
    const title = block.after ? `README.md:${block.line} (after ${block.after}): ${block.commands[0]}` : `README.md:${block.line}: ${block.commands.join(" ⏎ ").slice(0, 80)}`;
    it(title, async () => {
      const port = await freePort();
      const state = mkdtempSync(join(tmpdir(), "readme-state-"));
      const home = mkdtempSync(join(tmpdir(), "readme-home-"));
      dirs.push(state, home);
      const local = (command: string) => command.replaceAll("127.0.0.1:8787", `127.0.0.1:${port}`).replaceAll(".wrangler/state", state);
      const session = new Session({ ...process.env, HOME: home, KUBECONFIG: join(home, "kubeconfig") });
      let relay: RunningRelay | undefined;
      for (const command of [...(block.after ? [block.after] : []), ...block.commands].map(local)) {
        const vars = startLine(command);
        if (vars === undefined) {
          await session.do(command);
          continue;
        }
        expect(relay, "one relay a block").toBeUndefined();
        relay = await relayReady(launch({ ...(session.env as Record<string, string>), ...vars, PORT: String(port), PERSIST_DIR: state }));
        started.push(relay);
      }
      expect(relay, "the block starts a relay").toBeDefined();
      await waitForOutput(relay!.process, relay!.output, "[start] Ctrl-C stops");
      // And what that relay printed, in a session of its own (the reader's environment as the block left it).
      const printed = relay!
        .output()
        .split("\n")
        .flatMap((line) => /^\[start\] {5}(\S.*)$/.exec(line)?.[1] ?? []);
      expect(printed.length).toBeGreaterThanOrEqual(2);
      const again = new Session(session.env);
      for (const command of printed) await again.do(command);
      await relay!.stop();
    }, 180_000);
  }
});
