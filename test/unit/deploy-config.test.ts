import { describe, expect, it } from "vitest";
import { configurationProblems, type DeployConfiguration, parseVar, secretNames } from "../../scripts/deploy-config.ts";

const serving: DeployConfiguration = {
  vars: { AUTH_MODE: "jwt", UPSTREAM_URL: "https://k8s.example.com" },
  fetchBindings: new Set(),
  secrets: new Set(["AUTH_JWT_SECRET"]),
  allowUnauthenticated: false,
};
const problems = (change: Partial<DeployConfiguration>) => configurationProblems({ ...serving, ...change });

describe("a deploy configuration that would serve", () => {
  it("has an upstream, a decided mode and the secrets it names", () => {
    expect(problems({})).toEqual([]);
    expect(problems({ vars: { AUTH_MODE: "kube" }, fetchBindings: new Set(["UPSTREAM"]) })).toEqual([]);
    expect(
      problems({ vars: { AUTH_MODE: "kube", CLUSTERS: '{"prod": {"binding": "PROD_VPC", "tokenSecret": "PROD_TOKEN"}}' }, fetchBindings: new Set(["PROD_VPC"]), secrets: new Set(["PROD_TOKEN"]) }),
    ).toEqual([]);
  });

  it("is refused without an upstream, saying the three ways to give one", () => {
    expect(problems({ vars: { AUTH_MODE: "jwt" } })).toEqual([expect.stringMatching(/^no upstream: set UPSTREAM_URL .*, bind the API server as UPSTREAM .*, or name clusters in CLUSTERS$/)]);
  });

  it("is refused without AUTH_MODE, with a mode it does not know, and with none unless acknowledged and given host names", () => {
    const upstream = { UPSTREAM_URL: "https://k8s.example.com" };
    expect(problems({ vars: upstream })).toEqual([expect.stringMatching(/^AUTH_MODE is not set/)]);
    expect(problems({ vars: { ...upstream, AUTH_MODE: "open" } })).toEqual([expect.stringMatching(/^AUTH_MODE is "open": set it to "jwt" or "kube"/)]);
    expect(problems({ vars: { ...upstream, AUTH_MODE: "none" } })).toEqual([expect.stringContaining("--allow-unauthenticated")]);
    expect(problems({ vars: { ...upstream, AUTH_MODE: "none" }, allowUnauthenticated: true })).toEqual([expect.stringMatching(/without ALLOWED_HOSTS.*set ALLOWED_HOSTS/)]);
    expect(problems({ vars: { ...upstream, AUTH_MODE: "none", ALLOWED_HOSTS: "relay.example.com" }, allowUnauthenticated: true })).toEqual([]);
  });

  it("is refused when a secret it names is not among the deploy's secrets, naming how to set it", () => {
    expect(problems({ secrets: new Set() })).toEqual([expect.stringContaining('add "AUTH_JWT_SECRET" to [secrets] required in wrangler.toml and set it (npx wrangler secret put AUTH_JWT_SECRET)')]);
    const clusters = '{"prod": {"url": "https://prod.example.com", "tokenSecret": "PROD_TOKEN"}, "lab": {"binding": "LAB_VPC"}, "odd": {}}';
    expect(problems({ vars: { AUTH_MODE: "jwt", CLUSTERS: clusters } })).toEqual([
      expect.stringMatching(/^CLUSTERS\.prod names tokenSecret PROD_TOKEN, which is not among the deploy's secrets/),
      expect.stringMatching(/^CLUSTERS\.lab names binding LAB_VPC, which wrangler\.toml does not bind/),
      expect.stringMatching(/^CLUSTERS\.odd has neither url nor binding/),
    ]);
  });

  it("says what is wrong with CLUSTERS that is not a JSON object", () => {
    expect(problems({ vars: { AUTH_MODE: "jwt", UPSTREAM_URL: "https://k8s.example.com", CLUSTERS: "prod" } })).toEqual([expect.stringMatching(/^CLUSTERS must be a JSON object/)]);
    expect(problems({ vars: { AUTH_MODE: "jwt", UPSTREAM_URL: "https://k8s.example.com", CLUSTERS: { prod: {} } } })).toEqual([
      expect.stringMatching(/^CLUSTERS in \[vars\] must be a string of JSON/),
    ]);
  });
});

describe("what a deploy adds", () => {
  it("takes --var as KEY:VALUE, the value keeping its colons", () => {
    expect(parseVar("UPSTREAM_URL:https://k8s.example.com:6443")).toEqual(["UPSTREAM_URL", "https://k8s.example.com:6443"]);
    expect(() => parseVar("AUTH_MODE=jwt")).toThrow("--var takes KEY:VALUE");
  });

  it("reads a secrets file's names, as .env lines or JSON", () => {
    expect(secretNames("# comment\nA=1\nexport B = two\n\nnot a line\n")).toEqual(["A", "B"]);
    expect(secretNames('{"A": "1", "B": "2"}')).toEqual(["A", "B"]);
  });
});
