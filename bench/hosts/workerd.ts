/**
 * @module
 * A Worker started as `wrangler dev` starts one (`unstable_DevEnv`), reporting its own address and
 * that of wrangler's proxy worker in front of it: the bench measures it without that hop, and the hop.
 */
import { unstable_DevEnv } from "wrangler";
import { serveParent } from "../children.ts";
import { descendants, listeningPid } from "../proc.ts";

export interface WorkerdArgs {
  config: string;
  vars: Record<string, string>;
  stateDir: string;
}

export interface WorkerdInfo {
  /** The Worker's own workerd: what production runs, without wrangler's dev proxy. */
  url: string;
  pid: number;
  /** The address `wrangler dev` prints, through its proxy worker. */
  proxyUrl: string;
  proxyPid: number;
  inspectorUrl: string;
}

interface ProxyData {
  userWorkerUrl: { protocol: string; hostname: string; port: string };
}

serveParent<WorkerdArgs>(async ({ config, vars, stateDir }) => {
  const devEnv = new unstable_DevEnv();
  // The Worker's own address arrives with the first reload, after the proxy is already up.
  const reloaded = new Promise<ProxyData>((resolve, reject) => {
    devEnv.once("reloadComplete", (event: { proxyData: ProxyData }) => resolve(event.proxyData));
    devEnv.once("buildFailed", () => reject(new Error("the Worker did not build (see the log above)")));
    devEnv.once("error", (e: unknown) => reject(e instanceof Error ? e : new Error(String(e))));
  });
  const worker = await devEnv.startWorker({
    config,
    bindings: Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, { type: "plain_text", value }])),
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: { port: 0 }, persist: stateDir, watch: false, logLevel: "warn" },
  });
  const stop = () => worker.dispose();
  try {
    // First the reload (it fails fast on a build error, where the proxy would wait forever).
    const direct = (await reloaded).userWorkerUrl;
    const proxy = await worker.url;
    const inspector = await worker.inspectorUrl;
    const processes = descendants(process.pid);
    const pid = listeningPid(Number(direct.port), processes);
    const proxyPid = listeningPid(Number(proxy.port), processes);
    if (pid === undefined || proxyPid === undefined || !inspector) throw new Error("could not find the Worker's workerd processes or inspector");
    const info: WorkerdInfo = {
      url: `${direct.protocol}//${direct.hostname}:${direct.port}`,
      pid,
      proxyUrl: proxy.origin,
      proxyPid,
      inspectorUrl: `ws://${inspector.host}/ws`,
    };
    return { info, ops: {}, stop };
  } catch (e) {
    await stop();
    throw e;
  }
});
