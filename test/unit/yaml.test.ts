/** JSON to YAML as the API server converts it (src/k8s/yaml.ts), against the API server's own conversion. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ListItems } from "../../src/k8s/list-items.ts";
import { compareKeys, formatNumber, jsonToYaml, resolvesToNonString, YamlList } from "../../src/k8s/yaml.ts";

/** Cases whose YAML is go-yaml's, made by yaml-golden.go (sigs.k8s.io/yaml JSONToYAML of Go's JSON). */
const golden = (JSON.parse(readFileSync(new URL("./yaml-golden.json", import.meta.url), "utf8")) as { cases: Array<{ json: string; yaml: string }> }).cases;

/** A list written as YamlList writes it: the list's JSON text cut into `pieces` chunks, taken apart by ListItems as the relay's stream is. */
function streamed(json: string, cut: (i: number) => number): string {
  const items = new ListItems();
  const yaml = new YamlList();
  let out = "";
  for (let at = 0, i = 0; at < json.length; i++) {
    const next = Math.min(json.length, at + cut(i));
    const pieces = items.push(json.slice(at, next));
    if (pieces.head) out += yaml.begin(JSON.stringify(pieces.head));
    for (const item of pieces.items) out += yaml.item(item);
    at = next;
  }
  return out + yaml.end();
}

/** Lists as the relay writes them: an object whose last field is its items. */
const isList = (json: string): boolean => {
  const value = JSON.parse(json) as unknown;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.at(-1) === "items" && Array.isArray((value as { items: unknown }).items);
};

describe("JSON to YAML, as the API server writes it", () => {
  it(`writes each of ${golden.length} documents byte for byte as go-yaml does`, () => {
    const different = golden.filter((c) => jsonToYaml(c.json) !== c.yaml);
    expect(different.map((c) => ({ json: c.json.slice(0, 200), expected: c.yaml.slice(0, 400), got: jsonToYaml(c.json).slice(0, 400) }))).toEqual([]);
  });

  it("writes a list an item at a time exactly as the whole list, however its JSON arrives", () => {
    const lists = golden.filter((c) => isList(c.json));
    expect(lists.length).toBeGreaterThanOrEqual(8);
    for (const c of lists) {
      expect(streamed(c.json, () => c.json.length)).toBe(c.yaml);
      expect(streamed(c.json, () => 1)).toBe(c.yaml);
      expect(streamed(c.json, (i) => 1 + ((i * 7919) % 97))).toBe(c.yaml);
    }
  });

  it("quotes what go-yaml would read back as something else, and nothing more", () => {
    for (const s of [
      "",
      "true",
      "yes",
      "Off",
      "~",
      "null",
      "0",
      "-1",
      "+1",
      "1.5",
      ".5",
      "1e3",
      "0x1F",
      "017",
      "08",
      "1_000",
      "2024-01-02",
      "2024-01-02T03:04:05Z",
      "0000-02-29",
      "2000-02-29",
      ".inf",
      ".5_0",
      ".5e1_0",
      "2024-01-02  03:04:05",
    ])
      expect(resolvesToNonString(s)).toBe(true);
    for (const s of ["<<", "1.2.3", "v1", "0x", "1e400", "2024-02-30", "1900-02-29", "2024-01-02T03:04:05", "nginx:1.27", "-", "+", ".", "._5", ".5_", ".e5", "2024-01-02 03:04:05Z"])
      expect(resolvesToNonString(s)).toBe(false);
  });

  it("prints numbers as go-yaml resolves them: ints as ints, floats as Go's shortest %g", () => {
    expect(["1", "-0", "18446744073709551615", "18446744073709551616", "1.0", "1e21", "1e-7", "123456.5", "1234567.5", "0.0001", "-0.0"].map(formatNumber)).toEqual([
      "1",
      "0",
      "18446744073709551615",
      "1.8446744073709552e+19",
      "1",
      "1e+21",
      "1e-07",
      "123456.5",
      "1.2345675e+06",
      "0.0001",
      "-0",
    ]);
  });

  it("orders keys as go-yaml does: digit runs by their number", () => {
    expect(["a10", "b", "a2", "A", "a1", "_a"].sort(compareKeys)).toEqual(["_a", "A", "a1", "a2", "a10", "b"]);
  });
});
