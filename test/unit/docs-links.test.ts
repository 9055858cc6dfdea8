/**
 * The documentation's links lead somewhere: every relative link of README.md, DESIGN.md, docs/
 * and docs/decisions/ names a file of the repository, and its `#anchor` a heading of that file
 * (as GitHub makes anchors of headings).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGES = [
  "README.md",
  "DESIGN.md",
  "BENCHMARKS.md",
  "SECURITY.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, "docs", "decisions"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/decisions/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N}\- ]/gu, "")
    .replaceAll(" ", "-");

/** The text outside fenced blocks. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "");
}

function anchorsOf(path: string): Set<string> {
  const headings = prose(readFileSync(path, "utf8")).matchAll(/^#+ (.+)$/gm);
  return new Set([...headings].map((m) => anchor(m[1]!)));
}

describe("the documentation's links", () => {
  for (const page of PAGES) {
    it(`${page}: every relative link names a file, and a heading in it`, () => {
      const text = prose(readFileSync(join(ROOT, page), "utf8"));
      const broken: string[] = [];
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!) || target!.startsWith("/")) continue;
        const [path, hash] = target!.split("#") as [string, string | undefined];
        const file = path === "" ? join(ROOT, page) : join(ROOT, dirname(page), path);
        if (!existsSync(file)) broken.push(`${target} (no ${relative(ROOT, file)})`);
        else if (hash !== undefined && file.endsWith(".md") && !anchorsOf(file).has(hash)) broken.push(`${target} (no heading #${hash} in ${relative(ROOT, file)})`);
      }
      expect(broken).toEqual([]);
    });
  }
});
