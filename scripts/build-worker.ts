/**
 * `node scripts/build-worker.ts <wrangler.toml>`: prints, as JSON, the Worker that configuration
 * file describes, ready for Miniflare: its name, its Miniflare options as wrangler reads them
 * (`unstable_readConfig`, `unstable_getMiniflareWorkerOptions`: bindings, assets, compatibility)
 * and its main module bundled the way wrangler bundles it (esbuild, one ES module,
 * `cloudflare:*` and `node:*` left to the runtime — the `nodejs_compat` flag gives it the Node
 * modules the Worker imports (`node:zlib`) — workerd/worker/browser conditions). A process of its own,
 * so a runtime that lives for hours keeps neither wrangler nor esbuild (together some 140 MB).
 */
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig, type Unstable_MiniflareWorkerOptions } from "wrangler";

export interface BuiltWorker {
  name: string;
  workerOptions: Unstable_MiniflareWorkerOptions["workerOptions"];
  /** The bundled main module. */
  script: string;
}

async function buildWorker(configPath: string): Promise<BuiltWorker> {
  const wrangler = unstable_readConfig({ config: configPath }, { hideWarnings: true });
  const { main, define, workerOptions } = unstable_getMiniflareWorkerOptions(wrangler);
  if (!main) throw new Error(`${configPath} names no main module`);
  const result = await build({
    entryPoints: [main],
    absWorkingDir: fileURLToPath(new URL("..", import.meta.url)),
    bundle: true,
    format: "esm",
    target: "es2024",
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*", "node:*"],
    keepNames: true,
    define: { "process.env.NODE_ENV": '"development"', ...define },
    logLevel: "silent",
    write: false,
  });
  return { name: wrangler.name ?? "worker", workerOptions, script: result.outputFiles[0]!.text };
}

if (import.meta.main) process.stdout.write(JSON.stringify(await buildWorker(process.argv[2]!)));
