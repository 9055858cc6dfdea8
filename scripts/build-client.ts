/**
 * Bundle the browser side into `public/`: `client.js`, the client package's bundle minified
 * (any page on the relay's origin, or a devtools console, can `await import("/client.js")`),
 * and `app.js`, the live cluster page, which loads the library from `client.js` like any other
 * page would. Both are generated, not committed: `npm start` and the browser test build them.
 */
import { build, type Plugin } from "esbuild";
import { rename, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { bundleClient } from "../packages/client/bundle.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The page's `import ... from "../index.ts"` is the published library: load it from client.js. */
const libraryFromClientJs: Plugin = {
  name: "library-from-client-js",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/index\.ts$/ }, (args) => (args.importer.includes("/src/client/page/") ? { path: "./client.js", external: true } : undefined));
  },
};

export async function buildClient(): Promise<void> {
  const results = await Promise.all([
    bundleClient(`${root}public/client.js`, { minify: true, sourcemap: "linked" }),
    build({
      absWorkingDir: root,
      entryPoints: ["src/client/page/main.ts"],
      outfile: "public/app.js",
      plugins: [libraryFromClientJs],
      bundle: true,
      format: "esm",
      target: "es2022",
      minify: true,
      sourcemap: "linked",
      legalComments: "none",
      logLevel: "warning",
      write: false,
    }),
  ]);
  // Write-then-rename: a relay serving public/ (or a concurrent build) never sees half a file.
  for (const file of results.flatMap((r) => r.outputFiles ?? [])) {
    const partial = `${file.path}.${process.pid}.partial`;
    await writeFile(partial, file.contents);
    await rename(partial, file.path);
  }
}

if (import.meta.main) await buildClient();
