/**
 * How the client is bundled: its source (`src/client`, with the protocol modules of `src/k8s` it
 * imports, and the one library they use) as one ES module. The package ships it as it is
 * (build.ts); the relay serves it minified as `/client.js` (scripts/build-client.ts).
 */
import { build, type BuildResult, type Plugin } from "esbuild";
import { readFile } from "node:fs/promises";
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
    // Neutral reads no package.json field by default: the one library the client uses is CommonJS.
    mainFields: ["module", "main"],
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

/** The licences of the third-party packages a bundle holds (their code is copied into it), as one text. */
export async function bundledLicences(result: BuildResult<{ metafile: true }>): Promise<string> {
  const packages = new Set<string>();
  for (const input of Object.keys(result.metafile.inputs)) {
    const name = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
    if (name) packages.add(name);
  }
  const notices = [];
  for (const name of [...packages].sort()) {
    const dir = join(repo, "node_modules", name);
    const { version, license } = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as { version: string; license: string };
    notices.push(`${name}@${version} (${license})\n\n${(await readFile(join(dir, "LICENSE"), "utf8")).trim()}\n`);
  }
  return `This bundle holds code of the following packages, under their licences:\n\n${notices.join("\n---\n\n")}`;
}
