/**
 * Build the package (`npm run build`, and `npm pack` before it packs): `dist/index.js`, the client
 * as one ES module (bundle.ts); `dist/index.d.ts`, its types in one file, so what the package
 * ships refers to nothing outside it.
 */
import { Extractor, ExtractorConfig, ExtractorLogLevel } from "@microsoft/api-extractor";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleClient } from "./bundle.ts";

const here = fileURLToPath(new URL(".", import.meta.url));
const dist = join(here, "dist");

/** Write-then-rename: a reader of dist/ (a pack, a test) never sees half a file. */
async function replace(path: string, contents: string | Uint8Array): Promise<void> {
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, contents);
  await rename(partial, path);
}

/** `dist/index.js` (readable: an application's bundler minifies it). */
async function buildJs(): Promise<void> {
  const result = await bundleClient(join(dist, "index.js"));
  for (const file of result.outputFiles) await replace(file.path, file.contents);
}

/**
 * `dist/index.d.ts`: the compiler's declarations for every module the entry reaches (tsconfig.json
 * here), rolled into one file by API Extractor, with kubernetes-types' ObjectMeta and Status
 * copied in: the package needs no dependency, and kubernetes-types' own Pod, Deployment, … fit them.
 */
async function buildTypes(): Promise<void> {
  // Inside the package, so the compiler finds kubernetes-types from there; never packed (`files`).
  const declarations = await mkdtemp(join(dist, ".declarations-"));
  const partial = join(dist, `index.d.ts.${process.pid}.partial`);
  try {
    execFileSync(process.execPath, [join(here, "../../node_modules/typescript/bin/tsc"), "-p", here, "--noEmit", "false", "--declaration", "--emitDeclarationOnly", "--outDir", declarations], {
      stdio: "inherit",
    });
    const entry = join(declarations, "client/index.d.ts");
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: here,
        mainEntryPointFilePath: entry,
        compiler: {
          overrideTsconfig: {
            compilerOptions: { target: "es2022", module: "nodenext", moduleResolution: "nodenext", lib: ["es2022", "dom"], types: [], strict: true, allowImportingTsExtensions: true, noEmit: true },
            files: [entry],
          },
        },
        apiReport: { enabled: false },
        docModel: { enabled: false },
        tsdocMetadata: { enabled: false },
        dtsRollup: { enabled: true, untrimmedFilePath: partial },
        bundledPackages: ["kubernetes-types"],
        newlineKind: "lf",
        messages: {
          // No release tags (@public, @beta): the package's API is what its entry exports. A type
          // it names but does not export (kubernetes-types' Time, OwnerReference, …) is declared in
          // the file all the same.
          extractorMessageReporting: {
            default: { logLevel: ExtractorLogLevel.Warning },
            "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None },
            "ae-forgotten-export": { logLevel: ExtractorLogLevel.None },
          },
          compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
          tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
        },
      },
      configObjectFullPath: undefined,
      packageJsonFullPath: join(here, "package.json"),
    });
    const result = Extractor.invoke(config, {
      localBuild: false,
      // Its notices (the compiler version it analyses with) go unsaid, so stdout stays empty; its warnings go to stderr.
      messageCallback: (message) => {
        if (message.logLevel === ExtractorLogLevel.Info) message.logLevel = ExtractorLogLevel.None;
      },
    });
    if (!result.succeeded) throw new Error(`the package's types: API Extractor reported ${result.errorCount} errors and ${result.warningCount} warnings (above)`);
    await rename(partial, join(dist, "index.d.ts"));
  } finally {
    await rm(declarations, { recursive: true, force: true });
    await rm(partial, { force: true });
  }
}

if (process.argv.length > 2) {
  console.error(`the package's build takes no arguments (given: ${process.argv.slice(2).join(" ")}): run \`npm run build\` in packages/client, or \`npm pack\` there to build and pack it`);
  process.exit(2);
}
await mkdir(dist, { recursive: true });
await Promise.all([buildJs(), buildTypes()]);
