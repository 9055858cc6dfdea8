/**
 * The client package as a user gets it: `npm pack` in packages/client (which builds it), the
 * tarball installed into an empty project outside the repository, and that project watching
 * `npm start`'s relay with it from plain Node 22 and, bundled by esbuild, from a page in headless
 * Chromium; TypeScript (strict) types the same project under `nodenext`, `bundler`, and Node's
 * own types without the DOM. Nothing comes from the registry: the package has no dependencies,
 * and the tools are the repository's own. Without Chromium the page's test says so loudly and
 * skips itself (on CI it fails).
 */
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { have } from "../kit/tools.ts";
import { launchChromium, recordSocketProtocols } from "./chromium.ts";
import { startRelay, waitForOutput, type RunningRelay } from "./harness.ts";
import { simulatorUrl } from "./kube.ts";

const chromiumHere = have("chromium", "the client package's browser test");

const PACKAGE_DIR = fileURLToPath(new URL("../../packages/client/", import.meta.url));
const TSC = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));
const NODE_TYPES = fileURLToPath(new URL("../../node_modules/@types", import.meta.url));
const NAME = "@kube-watch-relay/client";
/** The budget the package's README states: what the whole package weighs, minified and gzipped. */
const SIZE_BUDGET_BYTES = 12 * 1024;
/** The namespace this test owns. */
const NS = "e2e-client-package";

/** `command args…` in `cwd`; fails with what it printed. The environment is this one's, less any Node flags. */
function run(command: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  const { NODE_OPTIONS: _, ...env } = process.env;
  return new Promise((resolve, reject) =>
    execFile(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${command} ${args.join(" ")} in ${cwd}: ${error.message}\n${stdout}\n${stderr}`)) : resolve({ stdout, stderr }),
    ),
  );
}

interface Packed {
  filename: string;
  files: Array<{ path: string }>;
}

describe("the client package, packed and installed into an empty project", () => {
  let work: string;
  let project: string;
  let packed: Packed;
  let relay: RunningRelay;
  let sim: string;

  /** Create a pod in the test's namespace, through the simulated cluster's API. */
  async function createPod(name: string): Promise<void> {
    const response = await fetch(`${sim}/api/v1/namespaces/${NS}/pods`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } }),
    });
    if (!response.ok) throw new Error(`creating pod ${name}: ${response.status} ${await response.text()}`);
  }

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "client-package-"));
    project = join(work, "project");
    const packAndInstall = async () => {
      // npm pack --json answers on stdout alone: the build (prepack) writes only to stderr.
      const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], PACKAGE_DIR);
      packed = (JSON.parse(stdout) as Packed[])[0]!;
      await mkdir(project);
      await writeFile(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
      await run("npm", ["install", "--offline", "--no-audit", "--no-fund", join(work, packed.filename)], project);
    };
    const relayStarted = async () => {
      relay = await startRelay({ SIM_CHURN: "0" });
      sim = simulatorUrl(relay);
    };
    await Promise.all([packAndInstall(), relayStarted()]);
  }, 240_000);

  afterAll(async () => {
    await relay?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("ships built JavaScript, one file of types and its notices, no TypeScript and no dependencies, under its size budget", async () => {
    expect(packed.files.map((f) => f.path).sort()).toEqual(["CHANGELOG.md", "README.md", "dist/index.d.ts", "dist/index.js", "package.json"]);
    const installed = join(project, "node_modules", NAME);
    const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8"));
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
    // The types name nothing outside their file: no import, no reference to another.
    const types = await readFile(join(installed, "dist/index.d.ts"), "utf8");
    expect(types).not.toMatch(/^\s*(import|export .* from|\/\/\/ <reference)/m);
    // No library's code is copied in (its licence would have to ship with it): the bundle names the files it holds.
    expect(await readFile(join(installed, "dist/index.js"), "utf8")).not.toContain("node_modules/");

    const minified = await build({ entryPoints: [join(installed, "dist/index.js")], bundle: true, format: "esm", minify: true, write: false, logLevel: "silent" });
    const gzipped = gzipSync(minified.outputFiles[0]!.contents, { level: 9 }).byteLength;
    expect(gzipped, `the package is ${gzipped} bytes minified and gzipped, over its budget: make it smaller, or raise the budget here and in its README`).toBeLessThan(SIZE_BUDGET_BYTES);
  });

  it("refuses an argument to its build in one line that says what to run", async () => {
    const refused = await run("npm", ["run", "-s", "build", "--", "--watch"], PACKAGE_DIR).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/\nthe package's build takes no arguments \(given: --watch\): run `npm run build` in packages\/client, or `npm pack` there to build and pack it\n$/);
  });

  it("watches the relay from plain Node 22, no flags", async () => {
    await writeFile(
      join(project, "watch.js"),
      `import { informer } from "${NAME}";
const [url, wanted] = process.argv.slice(2);
const pods = informer(url, {
  onAdd(pod) {
    if (pod.metadata.name !== wanted) return;
    console.log("added " + pod.metadata.name);
    pods.stop();
  },
});
await pods.synced;
console.log("synced " + pods.objects.size);
await pods.done;
`,
    );
    const child = spawn(process.execPath, ["watch.js", `${relay.url}/api/v1/namespaces/${NS}/pods`, "from-node"], { cwd: project, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    try {
      await waitForOutput(child, () => output, "synced ", 30_000);
      await createPod("from-node");
      expect(await exited, output).toBe(0);
      expect(output).toContain("added from-node");
    } finally {
      child.kill();
    }
  });

  it("types strictly in TypeScript, under moduleResolution nodenext and bundler, and with Node's types in place of the DOM's", async () => {
    await writeFile(
      join(project, "check.ts"),
      `import { informer, watch, WatchError, type KubeObject, type WatchUpdate } from "${NAME}";

interface Pod extends KubeObject {
  status?: { phase?: string };
}

export async function follow(url: string): Promise<void> {
  for await (const update of watch<Pod>(url, { timeoutSeconds: 60 })) {
    const seen: WatchUpdate<Pod> = update;
    if (seen.type === "ADDED") console.log(seen.object.metadata?.name, seen.object.status?.phase);
  }
  const pods = informer<Pod>(url, { onAdd: (pod) => console.log(pod.metadata?.namespace) });
  await pods.synced;
}

export function describeFailure(error: unknown): string | undefined {
  return error instanceof WatchError ? error.status?.message : undefined;
}

// The types are the package's own, not any: an option it does not have is an error.
// @ts-expect-error
watch("/api/v1/pods", { notAnOption: true });
`,
    );
    const configs = {
      nodenext: { module: "nodenext", moduleResolution: "nodenext", lib: ["es2022", "dom"], types: [] },
      bundler: { module: "esnext", moduleResolution: "bundler", lib: ["es2022", "dom"], types: [] },
      node: { module: "nodenext", moduleResolution: "nodenext", lib: ["es2022"], types: ["node"], typeRoots: [NODE_TYPES] },
    };
    for (const [name, options] of Object.entries(configs)) {
      await writeFile(join(project, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions: { strict: true, target: "es2022", noEmit: true, ...options }, files: ["check.ts"] }));
      await run(process.execPath, [TSC, "-p", `tsconfig.${name}.json`], project);
    }
  });

  it.skipIf(!chromiumHere)("bundled by esbuild into a page, watches the relay from Chromium", async () => {
    await writeFile(
      join(project, "app.js"),
      `import { informer } from "${NAME}";
const list = document.getElementById("pods");
const pods = informer("/api/v1/namespaces/${NS}/pods", {
  onAdd: (pod) => list.append(Object.assign(document.createElement("li"), { textContent: pod.metadata.name })),
});
await pods.synced;
document.body.dataset.synced = "true";
`,
    );
    const bundle = await build({ absWorkingDir: project, entryPoints: ["app.js"], bundle: true, format: "esm", platform: "browser", minify: true, metafile: true, write: false, logLevel: "silent" });
    expect(Object.keys(bundle.metafile.inputs)).toContain(`node_modules/${NAME}/dist/index.js`);
    const script = bundle.outputFiles[0]!.text;

    const browser: Browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      // The framing each watch socket agreed to, and whether any message came compressed (binary).
      const sockets = await recordSocketProtocols(page);
      let binaryFrames = 0;
      page.on("websocket", (socket) => socket.on("framereceived", (frame) => void (typeof frame.payload !== "string" && binaryFrames++)));
      // The page on the relay's origin, as an application served beside it would be: a document
      // the relay answered (Chromium lets a page loaded from loopback open sockets to loopback),
      // made the project's page, its script the project's bundle. Its lists and watches go to the relay.
      await page.route(`${relay.url}/client-package/app.js`, (route) => route.fulfill({ contentType: "text/javascript", body: script }));
      await page.goto(`${relay.url}/healthz`);
      await page.setContent('<!doctype html><meta charset="utf-8"><ul id="pods"></ul><script type="module" src="/client-package/app.js"></script>');
      await page.waitForSelector('body[data-synced="true"]');
      await createPod("from-chromium");
      await page.waitForFunction(() => [...document.querySelectorAll("#pods li")].some((li) => li.textContent === "from-chromium"));
      expect(errors).toEqual([]);
      // Chromium has DecompressionStream: the watch took the compressed framing, and read the new pod from a gzip message.
      expect(await sockets.agreed()).toEqual(["gzip.delta.watch.kube-watch-relay.dev"]);
      // The frame's event reaches this process on its own, not always before the page's answer that it showed the pod.
      await expect.poll(() => binaryFrames).toBeGreaterThan(0);

      // The relay's own /client.js is the same library: the same exports as the package's.
      const { stdout } = await run(process.execPath, ["--input-type=module", "-e", `console.log(JSON.stringify(Object.keys(await import("${NAME}")).sort()))`], project);
      // A string: the test's own module transform would rewrite an import() written as code.
      expect(await page.evaluate('import("/client.js").then((library) => Object.keys(library).sort())')).toEqual(JSON.parse(stdout));
    } finally {
      await browser.close();
    }
  });
});
