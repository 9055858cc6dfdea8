/**
 * The lint's import rules (biome.json, docs/house.md) catch what they are there for: an import
 * cycle, type-only imports included, and an import across the layers. The repository's own
 * configuration is run by Biome over a small tree made in a temporary directory, with one file
 * breaking each rule and others importing what the layers allow.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Each file of the tree, by path: the imports it makes. */
const TREE: Record<string, string> = {
  // Type-only cycles: `import type` both ways, and a named type import through a third file.
  "bench/a.ts": 'import type { B } from "./b.ts";\nexport type A = B | 1;\n',
  "bench/b.ts": 'import type { A } from "./a.ts";\nexport type B = A | 2;\n',
  "src/hub/storage.ts": 'import type { Request } from "./request.ts";\nexport type Row = Request | 1;\n',
  "src/hub/request.ts": 'import { type Freshness } from "./feed.ts";\nexport type Request = Freshness | 2;\n',
  "src/hub/feed.ts": 'import type { Row } from "./storage.ts";\nexport type Freshness = Row | 3;\n',
  // Across the layers.
  "src/k8s/pure.ts": 'import type { Grant } from "../auth/grant.ts";\nexport type Pure = Grant | 1;\n',
  "src/k8s/runtime.ts": 'import type { DurableObject } from "cloudflare:workers";\nexport type Runtime = DurableObject | 1;\n',
  "src/client/reaches.ts": 'import type { Row } from "../hub/storage.ts";\nexport type Reaches = Row | 1;\n',
  "src/client/page/reaches.ts": 'import type { Sim } from "../../sim/sim.ts";\nexport type PageReaches = Sim | 1;\n',
  "src/sim/reaches.ts": 'import type { Pure } from "../client/allowed.ts";\nexport type SimReaches = Pure | 1;\n',
  "conformance/reaches.ts": 'import type { Sim } from "../src/sim/sim.ts";\nexport type ConformanceReaches = Sim | 1;\n',
  "src/auth/reaches.ts": 'import type { Row } from "../hub/storage.ts";\nexport type AuthReaches = Row | 1;\n',
  "src/metrics/reaches.ts": 'import type { Route } from "../http/route.ts";\nexport type MetricsReaches = Route | 1;\n',
  "src/http/reaches.ts": 'import type { A } from "../../bench/a.ts";\nexport type HttpReaches = A | 1;\n',
  // What the layers allow.
  "src/auth/grant.ts": 'import type { Pure } from "../k8s/allowed.ts";\nexport type Grant = Pure | 1;\n',
  "src/k8s/allowed.ts": "export type Pure = 1;\n",
  "src/client/allowed.ts": 'import type { Pure } from "../k8s/allowed.ts";\nexport type { Pure };\n',
  "src/client/socket.ts": 'import type { Pure } from "../k8s/allowed.ts";\nexport type Socket = Pure | 1;\n',
  "src/client/page/allowed.ts": 'import type { Pure } from "../../k8s/allowed.ts";\nimport type { Socket } from "../socket.ts";\nexport type Page = Pure | Socket;\n',
  "src/sim/sim.ts": 'import type { Pure } from "../k8s/allowed.ts";\nexport type Sim = Pure | 1;\n',
  "conformance/checks/allowed.ts": 'import type { Pure } from "../../src/k8s/allowed.ts";\nimport type { Socket } from "../../src/client/socket.ts";\nexport type Check = Pure | Socket;\n',
  "src/http/route.ts": 'import type { Grant } from "../auth/grant.ts";\nimport type { Row } from "../hub/storage.ts";\nexport type Route = Grant | Row;\n',
  "src/hub/kit.test.ts": 'import type { Kit } from "../../test/kit.ts";\nexport type Tested = Kit | 1;\n',
  "test/kit.ts": "export type Kit = 1;\n",
};

let dir: string;
/** Biome's findings, `rule file` for each. */
let found: string[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "import-rules-"));
  const config = JSON.parse(readFileSync(join(ROOT, "biome.json"), "utf8"));
  delete config.$schema;
  writeFileSync(join(dir, "biome.json"), JSON.stringify(config));
  for (const [path, text] of Object.entries(TREE)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const run = spawnSync(join(ROOT, "node_modules/.bin/biome"), ["lint", "--reporter=github", "--max-diagnostics=none", "."], { cwd: dir, encoding: "utf8" });
  found = [...`${run.stdout}${run.stderr}`.matchAll(/^::error title=lint\/\w+\/(\w+),file=([^,]+),/gm)].map((m) => `${m[1]} ${m[2]!.replace(`${dir}/`, "")}`);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("import cycles", () => {
  it("are errors when every import in them is type-only", () => {
    expect(found).toContain("noImportCycles bench/a.ts");
    expect(found).toContain("noImportCycles bench/b.ts");
  });

  it("are errors through a named type import and a third file", () => {
    expect(found).toContain("noImportCycles src/hub/storage.ts");
    expect(found).toContain("noImportCycles src/hub/feed.ts");
  });
});

describe("the layers", () => {
  it.each([
    ["src/k8s/pure.ts", "k8s imports nothing outside k8s"],
    ["src/k8s/runtime.ts", "k8s imports no Workers module"],
    ["src/client/reaches.ts", "the client imports only client and k8s"],
    ["src/client/page/reaches.ts", "the page, part of the client, the same"],
    ["src/sim/reaches.ts", "the simulator imports only sim and k8s"],
    ["conformance/reaches.ts", "conformance imports nothing of the simulator"],
    ["src/auth/reaches.ts", "auth is below the hub"],
    ["src/metrics/reaches.ts", "a Durable Object is below the routes"],
    ["src/http/reaches.ts", "the relay imports nothing outside src/"],
  ])("refuse %s (%s)", (path) => {
    expect(found).toContain(`noRestrictedImports ${path}`);
  });

  it("allow what points downward, and tests their kits", () => {
    const allowed = [
      "src/auth/grant.ts",
      "src/k8s/allowed.ts",
      "src/client/allowed.ts",
      "src/client/socket.ts",
      "src/client/page/allowed.ts",
      "src/sim/sim.ts",
      "conformance/checks/allowed.ts",
      "src/http/route.ts",
      "src/hub/kit.test.ts",
    ];
    expect(found.filter((f) => allowed.includes(f.split(" ")[1]!))).toEqual([]);
  });
});
