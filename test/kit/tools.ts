/** Command-line tools some tests drive, found once: a test that needs a missing one skips, loudly. */
import { execFileSync } from "node:child_process";

/** Whether `command args…` runs and succeeds. */
export function onPath(command: string, ...args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export const hasKubectl = onPath("kubectl", "version", "--client");
