/**
 * @module
 * Real Kubernetes clients against a running relay: kubectl in a private HOME, KUBECONFIG and
 * cache directory (nothing from this machine leaks in, nothing from a run leaks out), a reader
 * for commands that keep printing (`-w`), and the simulated cluster's control API.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject } from "../../src/k8s/types.ts";
import { LineReader } from "../kit/lines.ts";
import type { RunningRelay } from "./harness.ts";

/** The simulated cluster `npm start` started (it prints where). */
export function simulatorUrl(relay: RunningRelay): string {
  const url = /simulated cluster at (http:\/\/127\.0\.0\.1:\d+)/.exec(relay.output())?.[1];
  if (!url) throw new Error(`npm start did not print its simulated cluster's URL:\n${relay.output()}`);
  return url;
}

export async function simGet<T = { metadata: { resourceVersion: string }; items: KubeObject[] }>(simUrl: string, path: string): Promise<T> {
  const response = await fetch(simUrl + path);
  if (!response.ok) throw new Error(`GET ${path} at the simulator: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Start or stop (`ratePerSec: 0`) the simulated cluster's churn. */
export async function setChurn(simUrl: string, churn: { ratePerSec: number; namespaces?: string[] }): Promise<void> {
  const response = await fetch(`${simUrl}/_sim/churn`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(churn) });
  if (!response.ok) throw new Error(`POST /_sim/churn: ${response.status} ${await response.text()}`);
}

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** A process that keeps printing: its stdout lines so far, and a way to await one that matches. */
export interface Follower {
  readonly lines: string[];
  waitFor(predicate: (lines: readonly string[]) => boolean, what: string, ms?: number): Promise<void>;
  stop(): void;
}

/** kubectl with its own HOME and KUBECONFIG (one cluster entry: the relay) and its own cache dir. */
export class Kubectl {
  readonly home = mkdtempSync(join(tmpdir(), "relay-kubectl-"));
  readonly #env: NodeJS.ProcessEnv;
  readonly #args: string[];

  constructor(server: string) {
    const kubeconfig = join(this.home, "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: relay",
        "  cluster:",
        `    server: ${server}`,
        "users:",
        "- name: relay-user",
        "  user: {}",
        "contexts:",
        "- name: relay",
        "  context: {cluster: relay, user: relay-user}",
        "current-context: relay",
        "",
      ].join("\n"),
    );
    this.#env = { PATH: process.env.PATH, HOME: this.home, KUBECONFIG: kubeconfig };
    this.#args = ["--cache-dir", join(this.home, "cache"), "--request-timeout", "30s"];
  }

  run(...args: string[]): Promise<Result> {
    return new Promise((resolve) => {
      execFile("kubectl", [...this.#args, ...args], { env: this.#env, timeout: 60_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
      });
    });
  }

  follow(...args: string[]): Follower {
    const child = spawn("kubectl", [...this.#args, ...args], { env: this.#env, stdio: ["ignore", "pipe", "pipe"] });
    const stdout = new LineReader(child.stdout, () => child.kill("SIGTERM"));
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    return {
      lines: stdout.lines,
      async waitFor(predicate, what, ms = 60_000) {
        if (predicate(stdout.lines)) return;
        try {
          // Every line is in `lines` before it is handed out: the predicate sees it.
          await stdout.untilLine(() => predicate(stdout.lines), what, ms);
        } catch (e) {
          throw new Error(`kubectl ${args.join(" ")}: ${(e as Error).message}\nstderr: ${stderr}`);
        }
      },
      stop: () => stdout.close(),
    };
  }

  cleanup(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** Table rows as kubectl prints them, split on runs of spaces (header dropped). */
export const rows = (out: string): string[][] =>
  out
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s{2,}/));
