/**
 * `npm stop`: stop the relay `npm start -- --detach` started on `PORT` (8787 by default), and
 * the simulated cluster with it, as Ctrl-C stops a relay in the foreground.
 */
import { rmSync } from "node:fs";
import { detachedFiles, isLauncher, launcherOn } from "./detached.ts";

/** How long the launcher has to stop what it started before it is killed (its workerd dies with it). */
const STOP_WITHIN_MS = 20_000;

const port = Number(process.env.PORT ?? 8787);
if (!Number.isInteger(port) || port <= 0) {
  console.error(`[stop] PORT must be the port the relay was started on, not ${JSON.stringify(process.env.PORT)}`);
  process.exit(2);
}
const files = detachedFiles(port);
const pid = launcherOn(port);
if (pid === undefined) {
  rmSync(files.pid, { force: true });
  console.error(`[stop] no relay started with \`npm start -- --detach\` runs on port ${port}${port === 8787 ? " (PORT=<port> npm stop for another port)" : ""}`);
  process.exit(1);
}
process.kill(pid, "SIGTERM");
const deadline = Date.now() + STOP_WITHIN_MS;
while (isLauncher(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
if (isLauncher(pid)) {
  process.kill(pid, "SIGKILL");
  console.error(`[stop] the relay's launcher (pid ${pid}) did not stop within ${STOP_WITHIN_MS / 1000} s: killed it (its workerd dies with it)`);
}
rmSync(files.pid, { force: true });
console.log(`[stop] stopped the relay on port ${port} (launcher pid ${pid}); its log stays in ${files.log}`);
