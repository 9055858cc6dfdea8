/**
 * One relay per state directory (scripts/state-lock.ts), in real processes: a live holder
 * refuses the next, a released or dead holder's directory is taken, and of several relays that
 * find the same dead holder's lock at the same moment exactly one takes it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lockStateDirectory, StateDirectoryInUse } from "../../scripts/state-lock.ts";
import { LineReader } from "../kit/lines.ts";

const LOCK_MODULE = new URL("../../scripts/state-lock.ts", import.meta.url).href;

/**
 * A process that, for each line `<directory> <at>` it reads, waits until the clock reaches `at`
 * (so that every racer tries at the same moment), tries to lock the directory, and says `held`
 * or `busy`; it never releases, and dies when its input ends, leaving its locks stale.
 */
const RACER = `
const { lockStateDirectory, StateDirectoryInUse } = await import(${JSON.stringify(LOCK_MODULE)});
const pause = new Int32Array(new SharedArrayBuffer(4));
let pending = "";
process.stdin.on("data", (chunk) => {
  pending += chunk;
  for (let end; (end = pending.indexOf("\\n")) >= 0; pending = pending.slice(end + 1)) {
    const [dir, at] = pending.slice(0, end).split(" ");
    if (Date.now() < Number(at) - 2) Atomics.wait(pause, 0, 0, Number(at) - 2 - Date.now());
    while (Date.now() < Number(at));
    let answer;
    try {
      lockStateDirectory(dir);
      answer = "held";
    } catch (e) {
      answer = e instanceof StateDirectoryInUse ? "busy" : "error " + e.message;
    }
    process.stdout.write(answer + " " + dir + "\\n");
  }
});
process.stdin.on("end", () => process.exit(0));
`;

interface Racer {
  child: ChildProcess;
  answers: LineReader;
}

function racer(): Racer {
  const child = spawn(process.execPath, ["--input-type=module", "-e", RACER], { stdio: ["pipe", "pipe", "inherit"] });
  return { child, answers: new LineReader(child.stdout!, () => child.kill("SIGKILL")) };
}

async function finish(racers: Racer[]): Promise<void> {
  await Promise.all(
    racers.map(async ({ child }) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin!.end();
        await once(child, "exit");
      }
    }),
  );
}

describe("the state directory lock", () => {
  const root = mkdtempSync(join(tmpdir(), "relay-state-lock-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("refuses a second holder while the first lives, naming it, and is free again once released", () => {
    const dir = join(root, "live");
    const release = lockStateDirectory(dir);
    expect(() => lockStateDirectory(dir)).toThrowError(new StateDirectoryInUse(dir, process.pid));
    release();
    lockStateDirectory(dir)();
  });

  it("of several relays that find a dead holder's lock at the same moment, exactly one takes it (each of 40 times)", async () => {
    const rounds = Array.from({ length: 40 }, (_, i) => join(root, `race-${i}`));
    // A relay killed while holding every directory: each lock is stale.
    const dead = racer();
    const at = Date.now() + 50;
    for (const dir of rounds) dead.child.stdin!.write(`${dir} ${at}\n`);
    for (const dir of rounds) expect(await dead.answers.nextLine()).toBe(`held ${dir}`);
    dead.child.kill("SIGKILL");
    await once(dead.child, "exit");

    const racers = Array.from({ length: 6 }, racer);
    try {
      const outcomes: string[] = [];
      for (const dir of rounds) {
        const at = Date.now() + 30;
        for (const { child } of racers) child.stdin!.write(`${dir} ${at}\n`);
        const answers = await Promise.all(racers.map(async ({ answers }) => (await answers.nextLine()).split(" ")[0]));
        outcomes.push(answers.sort().join(","));
      }
      expect(outcomes).toEqual(rounds.map(() => "busy,busy,busy,busy,busy,held"));
    } finally {
      await finish(racers);
    }
  });
});
