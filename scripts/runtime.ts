/**
 * @module
 * The relay as `npm start` serves it: `src/index.ts` bundled the way wrangler bundles a Worker,
 * run by Miniflare in ONE workerd process, configured from `wrangler.toml` as wrangler reads it
 * (Durable Object bindings and their SQLite classes, assets, compatibility date and flags), with
 * nothing but the runtime between a client and the relay: the address it returns is a socket
 * workerd serves itself (no `wrangler dev` proxy worker, no Miniflare entry worker in front,
 * except with `tls`: see there).
 * Bundling and reading the configuration happen in a short-lived process
 * (scripts/build-worker.ts), so this one keeps only Miniflare loaded.
 *
 * Contract of `startRelayRuntime(options)`:
 * - Resolves once workerd listens on `url`; rejects (and leaves nothing running) if it cannot
 *   start. `StateDirectoryInUse` when another live relay holds `persistDir`.
 * - `pid` is workerd's process (found through Linux's /proc): the relay, its hubs and every
 *   socket to clients and upstreams. Miniflare restarts a workerd that crashes (and says so in
 *   `log`); `pid` is the one that started.
 * - Opens no other port anyone must choose: `port` (0 by default: a free one, as the kernel
 *   picks it), and only loopback ports picked by the kernel for Miniflare's own use (and the
 *   inspector, if asked for). Two runtimes started at once never collide.
 * - `secrets` reach workerd in memory (its configuration, on a pipe), never on disk.
 * - `persistDir`: Durable Object state that survives a restart (the layout `wrangler dev
 *   --persist-to` uses), locked for this process while it runs. Without it, state lives in
 *   a temporary directory of Miniflare's, removed at `stop()` (or when this process exits).
 * - On Linux (setpriv and setsid, util-linux), workerd dies with the thread that started it
 *   (the main thread, normally), however that ends, kill -9 included; elsewhere `log` says once
 *   that it may not. workerd runs in its own process group, so signals for the caller's group
 *   (a terminal's Ctrl-C) do not reach it: the caller stops it with `stop()`. While a runtime
 *   lives, `MINIFLARE_WORKERD_PATH` in this process names the tethering wrapper (Miniflare
 *   reads the binary's path only from there).
 * - Prints nothing: what the Worker logs (its JSON lines) and what Miniflare or workerd say go
 *   to `log`, one line at a time.
 * - The relay's isolate has the heap a Durable Object has deployed (scripts/heap-limit.ts);
 *   running out of it is fatal to workerd, as it is to an object deployed.
 * - A hot key stays one hub unless `vars` ask for replicas (scripts/one-thread.ts): every
 *   object here shares workerd's one thread, where a replica adds work and no capacity.
 * - `replicaWorkerd`: a hot key's replica hubs run in a second workerd (`replicaPid`), the same
 *   Worker named apart, which reaches the relay's other objects (roots, quotas, metrics) through
 *   Miniflare's dev registry, and serves the Worker on `replicaUrl` too (clients next to the
 *   replicas). Tethered and stopped as the first. The dev registry is a temporary directory
 *   (scripts/dev-registry.ts), removed at `stop()` or exit, or by the next runtime that makes
 *   one once this process is dead (a kill -9 leaves it behind).
 * - `muxWorkerd`: the same for the relay sockets' mux objects (`muxPid`, `muxUrl`).
 * - `stop()` ends workerd (each, with `replicaWorkerd` or `muxWorkerd`), waits for it, and releases the state
 *   directory; it may be called more than once.
 */
import { execFile, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Log, LogLevel, Miniflare, convertV4MiniflareOptions, type V4DurableObject } from "miniflare";
import { makeDevRegistry } from "./dev-registry.ts";
import { holdToPlatformHeap } from "./heap-limit.ts";
import { oneThreadDefaults } from "./one-thread.ts";
import { parentOf } from "./proc.ts";
import { lockStateDirectory } from "./state-lock.ts";
import type { BuiltWorker } from "./build-worker.ts";

export { StateDirectoryInUse } from "./state-lock.ts";

export type RuntimeLogLevel = "error" | "warn" | "info" | "debug";

export interface RelayRuntimeOptions {
  /** Interface to listen on (default `127.0.0.1`). */
  host?: string;
  /** Port to listen on (default 0: a free one). */
  port?: number;
  /** Worker variables (`UPSTREAM_URL`, `AUTH_MODE`, ...). */
  vars?: Record<string, string>;
  /** Secret Worker variables (`UPSTREAM_TOKEN`, `AUTH_JWT_SECRET`, ...): in memory only. */
  secrets?: Record<string, string>;
  /** Durable Object state kept across restarts, and locked while this runtime runs. */
  persistDir?: string;
  /**
   * Serve HTTPS with this key and certificate (PEM). workerd's direct sockets speak plain HTTP
   * only, so the relay is then served by Miniflare's entry socket, whose TLS workerd terminates
   * itself, and Miniflare's entry worker forwards each request to the relay inside workerd.
   */
  tls?: { key: string; cert: string };
  /** Open workerd's DevTools inspector on a free loopback port (`inspectorUrl`). */
  inspector?: boolean;
  /** The Wrangler configuration file (default: the repository's `wrangler.toml`). */
  configPath?: string;
  /**
   * Run a hot key's replica hubs in a second workerd (DESIGN.md, "Hot keys"), so a tree has a
   * thread per tier as it does deployed, where every object has its own: the benchmark's
   * measure of the extra hop. Its other objects stay in the first; `replicaPid` is the second.
   */
  replicaWorkerd?: boolean;
  /**
   * Run the relay sockets' `WATCH_MUX` objects in a second workerd (`muxPid`), as `replicaWorkerd`
   * does replicas: the benchmark's measure of relay sockets with a thread of their own, as deployed.
   */
  muxWorkerd?: boolean;
  /** Where the runtime's output goes, one line at a time (default: dropped). */
  log?: (line: string, level: RuntimeLogLevel) => void;
}

export interface RelayRuntime {
  /** Where the relay serves, e.g. `http://127.0.0.1:8787` (`https://` with `tls`). */
  url: string;
  /** workerd's process id. */
  pid: number;
  /** The replicas' workerd, with `replicaWorkerd`. */
  replicaPid?: number;
  /**
   * Where the replicas' workerd serves the same Worker (loopback), with `replicaWorkerd`: a
   * client that connects there is admitted next to the replicas, as deployed the Worker that
   * admits a replica's subscribers runs near them, so their messages never pass the roots' thread.
   */
  replicaUrl?: string;
  /** The mux objects' workerd, with `muxWorkerd`, and where it serves the same Worker (loopback): a relay socket opened there is admitted next to its object. */
  muxPid?: number;
  muxUrl?: string;
  /** workerd's DevTools endpoint for the relay's isolate, when `inspector` was asked for. */
  inspectorUrl?: string;
  stop(): Promise<void>;
}

const root = fileURLToPath(new URL("..", import.meta.url));
const TETHER = join(root, "scripts", "workerd-tethered.sh");
/** The workerd binary the installed Miniflare was built for (what it would run itself). */
const WORKERD = (createRequire(createRequire(import.meta.url).resolve("miniflare"))("workerd") as { default: string }).default;

const LEVELS: Partial<Record<LogLevel, RuntimeLogLevel>> = { [LogLevel.ERROR]: "error", [LogLevel.WARN]: "warn", [LogLevel.INFO]: "info", [LogLevel.DEBUG]: "debug" };

/** Miniflare's own messages, as lines for `log` (its default logger prints to the console). */
class LineLog extends Log {
  readonly #line: (line: string, level: RuntimeLogLevel) => void;
  constructor(line: (line: string, level: RuntimeLogLevel) => void) {
    super(LogLevel.INFO);
    this.#line = line;
  }
  override logWithLevel(level: LogLevel, message: string): void {
    const name = LEVELS[level];
    if (name && level <= this.level) this.#line(message, name);
  }
  /** "Ready on <entry socket>": not where clients go. */
  override logReady(): void {}
}

/** The Worker, bundled and configured as wrangler would (in a process of its own: scripts/build-worker.ts). */
function buildWorker(configPath: string): Promise<BuiltWorker> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(root, "scripts", "build-worker.ts"), configPath], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`could not build the Worker of ${configPath}: ${stderr.trim() || error.message}`));
      else resolve(JSON.parse(stdout) as BuiltWorker);
    });
  });
}

let tetheredRuntimes = 0;
let previousWorkerdPath: string | undefined;
let warnedUntethered = false;

/** Whether workerd can be tethered here (Linux, with util-linux's setpriv and setsid). */
const canTether = process.platform === "linux" && ["setpriv", "setsid"].every((tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0);

/** Point Miniflare at the tethering wrapper while at least one runtime lives; returns the undo. */
function tether(log: (line: string, level: RuntimeLogLevel) => void): () => void {
  if (!canTether) {
    if (!warnedUntethered) log("workerd is not tethered to this process (needs Linux with setpriv and setsid): if this process is killed, stop workerd yourself", "warn");
    warnedUntethered = true;
    return () => undefined;
  }
  if (tetheredRuntimes++ === 0) {
    previousWorkerdPath = process.env.MINIFLARE_WORKERD_PATH;
    process.env.MINIFLARE_WORKERD_PATH = TETHER;
  }
  let undone = false;
  return () => {
    if (undone) return;
    undone = true;
    if (--tetheredRuntimes > 0) return;
    if (previousWorkerdPath === undefined) delete process.env.MINIFLARE_WORKERD_PATH;
    else process.env.MINIFLARE_WORKERD_PATH = previousWorkerdPath;
  };
}

/** This process's child whose environment carries `marker`: the workerd of one runtime. */
function childWith(marker: string): number | undefined {
  for (const entry of existsSync("/proc") ? readdirSync("/proc") : []) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (parentOf(Number(entry)) === process.pid && readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(marker)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** What differs between the relay's workerd and a second one (`replicaWorkerd`, `muxWorkerd`). */
interface Instance {
  name: string;
  durableObjects: Record<string, V4DurableObject>;
  sockets: Record<string, unknown>;
  persistPath?: string;
  inspector: boolean;
  /** In its workerd's environment, to find it among this process's children. */
  marker: string;
  /** Before each of Miniflare's own lines, to say which workerd (the Worker's own lines name their hub). */
  logPrefix: string;
}

/** One Miniflare of the relay's Worker. */
function miniflareOf(worker: BuiltWorker, instance: Instance, options: RelayRuntimeOptions, devRegistry: string | undefined, log: (line: string, level: RuntimeLogLevel) => void): Miniflare {
  const [markerName, markerValue] = instance.marker.split("=") as [string, string];
  return new Miniflare(
    convertV4MiniflareOptions({
      ...worker.workerOptions,
      name: instance.name,
      durableObjects: instance.durableObjects,
      modules: [{ type: "ESModule", path: join(root, "relay.mjs"), contents: worker.script }],
      bindings: { ...oneThreadDefaults(options.vars), ...options.secrets },
      ...instance.sockets,
      // wrangler dev --persist-to's layout; without it, Miniflare's own temporary directory.
      ...(instance.persistPath ? { resourcePersistencePath: instance.persistPath } : {}),
      ...(instance.inspector ? { inspectorPort: 0 } : {}),
      ...(devRegistry ? { unsafeDevRegistryPath: devRegistry } : {}),
      unsafeRuntimeEnv: { RELAY_WORKERD: previousWorkerdPath ?? WORKERD, [markerName]: markerValue },
      // No request for Cloudflare's `cf` object template over the internet.
      cf: false,
      telemetry: { enabled: false },
      log: new LineLog((line, level) => log(`${instance.logPrefix}${line}`, level)),
      handleStructuredLogs: ({ level, message }) => {
        for (const line of message.split("\n")) if (line) log(line, level === "error" || level === "warn" ? level : "info");
      },
    }),
  );
}

/** The Worker's Durable Object bindings, as wrangler's configuration gives them to Miniflare. */
const bindingsOf = (worker: BuiltWorker) => (worker.workerOptions.durableObjects ?? {}) as Record<string, V4DurableObject>;

/** A second workerd hosting one binding's objects (`replicaWorkerd`, `muxWorkerd`). */
interface Split {
  /** The binding it hosts. */
  binding: string;
  /** The configured binding whose class its objects are. */
  classOf: string;
  /** Its name is the Worker's and this; its state a directory of this name under `persistDir`. */
  suffix: string;
  logPrefix: string;
}

const SPLITS = {
  replicaWorkerd: { binding: "WATCH_REPLICAS", classOf: "WATCH_HUB", suffix: "replicas", logPrefix: "replicas' workerd: " },
  muxWorkerd: { binding: "WATCH_MUX", classOf: "WATCH_MUX", suffix: "mux", logPrefix: "mux objects' workerd: " },
} satisfies Record<string, Split>;

function classOf(objects: Record<string, V4DurableObject>, split: Split): V4DurableObject {
  const object = objects[split.classOf];
  if (!object) throw new Error(`the Worker has no ${split.classOf} binding to run ${split.binding} of`);
  return object;
}

/**
 * A second workerd: the same Worker, named apart, whose `split.binding` objects are its own and
 * every other object the relay's (or another split's), reached through Miniflare's dev registry.
 */
function splitInstance(worker: BuiltWorker, split: Split, hosts: Record<string, V4DurableObject>, persistDir: string | undefined, marker: string): Instance {
  const objects = bindingsOf(worker);
  return {
    name: `${worker.name}-${split.suffix}`,
    durableObjects: { ...hosts, [split.binding]: classOf(objects, split) },
    // Its Worker serves too, on loopback: clients admitted next to its objects.
    sockets: { host: "127.0.0.1", port: 0, unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] },
    persistPath: persistDir ? join(persistDir, split.suffix, "v3") : undefined,
    inspector: false,
    marker: `${marker}-${split.suffix}`,
    logPrefix: split.logPrefix,
  };
}

/** A split's binding, as the other workerds name it: objects of the split's script. */
const splitBindings = (worker: BuiltWorker, splits: readonly Split[]) =>
  Object.fromEntries(splits.map((split) => [split.binding, { ...classOf(bindingsOf(worker), split), scriptName: `${worker.name}-${split.suffix}` }]));

/** Every binding, named by the script that hosts it: the relay's, or a split's. */
const hostsOf = (worker: BuiltWorker, splits: readonly Split[]) => ({
  ...Object.fromEntries(Object.entries(bindingsOf(worker)).map(([binding, o]) => [binding, { ...o, scriptName: worker.name }])),
  ...splitBindings(worker, splits),
});

export async function startRelayRuntime(options: RelayRuntimeOptions = {}): Promise<RelayRuntime> {
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? (() => undefined);
  const worker = await buildWorker(options.configPath ?? join(root, "wrangler.toml"));

  const persistDir = options.persistDir === undefined ? undefined : resolve(options.persistDir);
  const release = persistDir ? lockStateDirectory(persistDir) : () => undefined;
  const untether = tether(log);
  // Finds this runtime's workerd among this process's children (several runtimes may share a process).
  const marker = `RELAY_RUNTIME=${randomBytes(8).toString("hex")}`;
  const splits = (Object.keys(SPLITS) as Array<keyof typeof SPLITS>).filter((option) => options[option]).map((option) => SPLITS[option]);
  const devRegistry = splits.length > 0 ? makeDevRegistry() : undefined;
  const removeRegistry = () => devRegistry && rmSync(devRegistry, { recursive: true, force: true });
  // Miniflare's own SIGINT and SIGTERM handlers end the process without waiting for `stop()`.
  if (devRegistry) process.once("exit", removeRegistry);
  const cleanUp = () => {
    untether();
    release();
    removeRegistry();
    process.removeListener("exit", removeRegistry);
  };
  const running: Miniflare[] = [];
  const sides: Array<{ split: Split; pid: number | undefined; url: string }> = [];
  holdToPlatformHeap();
  try {
    const hosts = hostsOf(worker, splits);
    for (const split of splits) {
      const instance = splitInstance(worker, split, hosts, persistDir, marker);
      const second = miniflareOf(worker, instance, options, devRegistry, log);
      running.push(second);
      await second.ready;
      sides.push({ split, pid: childWith(instance.marker), url: (await second.unsafeGetDirectURL()).origin });
    }
    const mf = miniflareOf(
      worker,
      {
        name: worker.name,
        durableObjects: { ...bindingsOf(worker), ...splitBindings(worker, splits) },
        sockets: options.tls
          ? { host, port: options.port ?? 0, httpsKey: options.tls.key, httpsCert: options.tls.cert, logRequests: false }
          : // Miniflare's own entry socket: loopback, on a port the kernel picks. Clients use the direct socket.
            { host: "127.0.0.1", port: 0, unsafeDirectSockets: [{ host, port: options.port ?? 0 }] },
        persistPath: persistDir ? join(persistDir, "v3") : undefined,
        inspector: options.inspector === true,
        marker,
        logPrefix: "",
      },
      options,
      devRegistry,
      log,
    );
    running.push(mf);
    const entry = await mf.ready;
    const served = options.tls ? entry : await mf.unsafeGetDirectURL();
    const pid = childWith(marker);
    if (pid === undefined || sides.some((side) => side.pid === undefined)) throw new Error("workerd started but is not among this process's children (finding it needs Linux's /proc)");
    const [replicas, mux] = [SPLITS.replicaWorkerd, SPLITS.muxWorkerd].map((split) => sides.find((side) => side.split === split));
    const inspectorUrl = options.inspector ? `${(await mf.getInspectorURL()).origin}/core:user:${worker.name}` : undefined;
    let stopping: Promise<void> | undefined;
    return {
      url: served.origin,
      pid,
      replicaPid: replicas?.pid,
      replicaUrl: replicas?.url,
      muxPid: mux?.pid,
      muxUrl: mux?.url,
      inspectorUrl,
      stop: () =>
        (stopping ??= Promise.all(running.map((m) => m.dispose()))
          .then(() => undefined)
          .finally(cleanUp)),
    };
  } catch (e) {
    await Promise.all(running.map((m) => m.dispose().catch(() => undefined)));
    cleanUp();
    throw e;
  }
}
