/**
 * @module
 * What `deploy/rbac.yaml` promises in its comments, checked on the parsed manifest: read-only
 * verbs, no wildcard, no Secrets, a binding to the relay's own ServiceAccount.
 */
import { readFileSync } from "node:fs";
import { loadAllYaml } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { LIST_HUBS, READ_METRICS } from "../../src/auth/operator.ts";

const manifest = (file: string) => loadAllYaml(readFileSync(new URL(`../../deploy/${file}`, import.meta.url), "utf8")) as any[];
const docs = manifest("rbac.yaml");
const byKind = (kind: string) => docs.filter((d) => d.kind === kind);

describe("deploy/rbac.yaml", () => {
  const role = byKind("ClusterRole")[0];
  const rules: Array<{ apiGroups?: string[]; resources?: string[]; nonResourceURLs?: string[]; verbs: string[] }> = role.rules;

  it("grants only get, list and watch, and only get on discovery and OpenAPI URLs and on pods' logs", () => {
    for (const rule of rules) {
      if (rule.nonResourceURLs || rule.resources?.every((r) => r.includes("/"))) expect(rule.verbs).toEqual(["get"]);
      else expect(rule.verbs).toEqual(["get", "list", "watch"]);
    }
    expect(rules.filter((r) => r.resources?.some((resource) => resource.includes("/")))).toEqual([{ apiGroups: [""], resources: ["pods/log"], verbs: ["get"] }]);
  });

  it("names resources one by one (no wildcard could let Secrets in) and reads no Secrets", () => {
    const resourceRules = rules.filter((r) => r.resources);
    expect(resourceRules.flatMap((r) => [...r.resources!, ...r.apiGroups!, ...r.verbs])).not.toContain("*");
    expect(resourceRules.filter((r) => r.apiGroups!.includes("")).flatMap((r) => r.resources)).not.toContain("secrets");
    expect(rules.flatMap((r) => r.resources ?? [])).toEqual(expect.arrayContaining(["pods", "nodes", "namespaces", "deployments", "widgets"]));
  });

  it("binds the role to the relay's ServiceAccount, in the namespace it creates", () => {
    const [namespace] = byKind("Namespace");
    const [account] = byKind("ServiceAccount");
    const [binding] = byKind("ClusterRoleBinding");
    expect(account.metadata.namespace).toBe(namespace.metadata.name);
    expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: account.metadata.name, namespace: account.metadata.namespace }]);
  });

  it("keeps the long-lived token opt-in, in its own file, for the same ServiceAccount", () => {
    const [secret] = manifest("relay-token.yaml");
    const [account] = byKind("ServiceAccount");
    expect(byKind("Secret")).toEqual([]);
    expect(secret).toMatchObject({
      kind: "Secret",
      type: "kubernetes.io/service-account-token",
      metadata: { namespace: account.metadata.namespace, annotations: { "kubernetes.io/service-account.name": account.metadata.name } },
    });
  });
});

describe("deploy/operator-rbac.yaml", () => {
  const [role] = manifest("operator-rbac.yaml").filter((d) => d.kind === "ClusterRole");

  it("grants exactly what the operator endpoints ask the cluster: get metrics, list hubs, in the relay's group", () => {
    const asked = [READ_METRICS, LIST_HUBS].map((a) => ({ apiGroups: [a.group], resources: [a.resource], verbs: [a.verb] }));
    expect(role.rules).toEqual(asked);
  });
});
