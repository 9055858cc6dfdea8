/**
 * @module
 * The relay as `npm start` serves it (`startRelayRuntime`), in a process of its own, with the
 * isolate's inspector open for CPU profiles and heap readings.
 */
import { startRelayRuntime } from "../../scripts/runtime.ts";
import { serveParent } from "../children.ts";

export interface RelayRuntimeArgs {
  vars: Record<string, string>;
  stateDir: string;
  /** A hot key's replica hubs in a second workerd (`scripts/runtime.ts`). */
  replicaWorkerd?: boolean;
  /** The relay sockets' mux objects in a second workerd. */
  muxWorkerd?: boolean;
}

export interface RelayRuntimeInfo {
  url: string;
  pid: number;
  /** The replicas' workerd, with `replicaWorkerd`, and where it serves the relay too. */
  replicaPid?: number;
  replicaUrl?: string;
  /** The mux objects' workerd, with `muxWorkerd`, and where it serves the relay too. */
  muxPid?: number;
  muxUrl?: string;
  inspectorUrl: string;
}

serveParent<RelayRuntimeArgs>(async ({ vars, stateDir, replicaWorkerd, muxWorkerd }) => {
  const runtime = await startRelayRuntime({ vars, persistDir: stateDir, inspector: true, replicaWorkerd, muxWorkerd, log: (line, level) => level !== "debug" && console.log(line) });
  if (!runtime.inspectorUrl) {
    await runtime.stop();
    throw new Error("the relay's runtime opened no inspector");
  }
  const info: RelayRuntimeInfo = {
    url: runtime.url,
    pid: runtime.pid,
    replicaPid: runtime.replicaPid,
    replicaUrl: runtime.replicaUrl,
    muxPid: runtime.muxPid,
    muxUrl: runtime.muxUrl,
    inspectorUrl: runtime.inspectorUrl,
  };
  return { info, ops: {}, stop: () => runtime.stop() };
});
