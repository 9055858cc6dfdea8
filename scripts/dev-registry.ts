/**
 * @module
 * The directory of Miniflare's dev registry, through which the replicas' workerd
 * (`REPLICA_WORKERD`) and the relay's find each other's objects: one per runtime, in the system's
 * temporary directory, named for the launcher that made it (its pid and start time). The runtime
 * removes it when it stops or its process exits; a launcher that could do neither (kill -9)
 * leaves it behind, and the next one to make a registry removes it. Only a dead launcher's: a
 * live relay's workerds look each other up in theirs for as long as they run.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alive, startTime } from "./proc.ts";

const PREFIX = "relay-registry-";
/** `relay-registry-<pid>-<start time>-<random>`, the start time empty where /proc does not say it. */
const NAME = /^relay-registry-(\d+)-(\d*)-[^-]+$/;

/** Remove the registries in `parent` whose launcher no longer runs; the paths removed. */
export function removeStaleRegistries(parent = tmpdir()): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(parent)) {
    const made = NAME.exec(name);
    if (!made || alive(Number(made[1]), made[2] as string)) continue;
    const path = join(parent, name);
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}

/** A new registry directory of this process, after removing those dead launchers left behind. */
export function makeDevRegistry(parent = tmpdir()): string {
  removeStaleRegistries(parent);
  return mkdtempSync(join(parent, `${PREFIX}${process.pid}-${startTime(process.pid)}-`));
}
