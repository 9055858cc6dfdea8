/**
 * How the client is bundled: its source (`src/client`, with the protocol modules of `src/k8s` it
 * imports; no library's code) as one ES module. The package ships it as it is
 * (build.ts); the relay serves it minified as `/client.js` (scripts/build-client.ts).
 */
import { build, type BuildResult, type Plugin } from "esbuild";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../..", import.meta.url));

/** The package's entry point, in the repository's source. */
export const ENTRY = join(repo, "src/client/index.ts");

/**
 * The client's and the protocol's modules do nothing on import (none imports another for its
 * effects): said so, the bundler leaves out a module none of whose exports the client uses,
 * such as the Table printers `k8s/view.ts` imports for the relay's side of live views.
 */
const pureModules: Plugin = {
  name: "pure-modules",
  setup(b) {
    b.onResolve({ filter: /^\.\.?\/.*\.ts$/ }, (args) => ({ path: resolve(args.resolveDir, args.path), sideEffects: false }));
  },
};

/** The client as one ES2022 module at `outfile`, not written: its files are in `outputFiles`. */
export function bundleClient(outfile: string, options: { minify?: boolean; sourcemap?: "linked" } = {}): Promise<BuildResult<{ write: false; metafile: true }>> {
  return build({
    absWorkingDir: repo,
    entryPoints: [ENTRY],
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    legalComments: "none",
    logLevel: "warning",
    metafile: true,
    write: false,
    outfile,
    plugins: [pureModules],
    ...options,
  });
}
