/**
 * Command-line tools some tests drive, and what a test file does without one. On a developer's
 * machine it skips, loudly. On CI (`CI` set), which installs them all, it fails, naming the tool
 * and how to install it: CI runs every test, so a missing tool is its fault, never a quiet skip.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/** Whether `command args…` runs and succeeds. */
function runs(command: string, ...args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The Chromium the browser tests drive. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const TOOLS = {
  kubectl: { found: () => runs("kubectl", "version", "--client"), missing: "kubectl is not on PATH", install: "put a kubectl binary on PATH (https://kubernetes.io/docs/tasks/tools/)" },
  curl: { found: () => runs("curl", "--version"), missing: "curl is not on PATH", install: "apt-get install -y curl" },
  openssl: { found: () => runs("openssl", "version"), missing: "openssl is not on PATH", install: "apt-get install -y openssl" },
  chromium: { found: () => existsSync(CHROMIUM), missing: `no Chromium at ${CHROMIUM}`, install: "apt-get install -y chromium, or point CHROMIUM_PATH at one" },
};

/** CI sets `CI` (to `true`, or `1`); `CI=false` or `CI=0` is a developer saying it is not. */
const onCi = (): boolean => !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());

/**
 * Whether `tool` is here for `what` (the tests that need it, as a message names them). Without it,
 * this throws on CI, failing the test file that asked; elsewhere it says so and returns false, for
 * the file's `skipIf`.
 */
export function have(tool: keyof typeof TOOLS, what: string): boolean {
  const { found, missing, install } = TOOLS[tool];
  if (found()) return true;
  if (onCi()) throw new Error(`${missing}: ${what} cannot run without it, and CI runs every test. Install it: ${install}.`);
  const bar = "!".repeat(88);
  process.stderr.write(`\n${bar}\n!! SKIPPING ${what}: ${missing}.\n!! Install it: ${install}.\n${bar}\n\n`);
  return false;
}
