/** A kube-mode AccessSummary from the cluster's answers (src/auth/summary.ts): what is cluster-wide, what is asked, what is left out. */
import { describe, expect, it } from "vitest";
import { kubeSummary, MAX_CLUSTER_CHECKS, type KubeQuestions } from "../../src/auth/summary.ts";

const read = ["get", "list", "watch"] as const;

function cluster(rules: Record<string, Array<{ verbs: string[]; apiGroups?: string[]; resources?: string[] }> | "fails">, clusterWide: (resource: string) => boolean) {
  const asked: string[] = [];
  const ask: KubeQuestions = {
    rulesIn: async (namespace) => {
      const found = rules[namespace];
      return found === "fails" || found === undefined ? { ok: false, reason: `no answer for ${namespace}` } : { ok: true, rules: found, incomplete: false };
    },
    may: async (access) => {
      asked.push(`${access.verb} ${access.group}/${access.resource}`);
      return clusterWide(access.resource);
    },
  };
  return { ask, asked };
}

describe("a kube-mode access summary", () => {
  it("keeps the relay's verbs of each rule, names the namespaces with rules of their own, and what every namespace shares only once the cluster says it holds everywhere", async () => {
    const shared = { verbs: ["*"], apiGroups: [""], resources: ["configmaps"] };
    const { ask, asked } = cluster(
      {
        a: [shared, { verbs: ["get", "list", "create"], apiGroups: [""], resources: ["pods"] }, { verbs: ["create"], apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews"] }],
        b: [shared],
      },
      (resource) => resource === "configmaps",
    );
    const summary = await kubeSummary("prod", "ann", ["a", "b"], ask, undefined);
    expect(summary.status).toEqual({
      user: "ann",
      cluster: "prod",
      clusterRules: [{ verbs: [...read], apiGroups: [""], resources: ["configmaps"] }],
      namespaces: [{ name: "a", resourceRules: [{ verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] }] }],
      incomplete: false,
    });
    expect(asked).toEqual(["get /configmaps", "list /configmaps", "watch /configmaps"]);
  });

  it("says what it left out: a namespace the cluster would not answer for, too many questions about shared rules", async () => {
    const wide = { verbs: ["get", "list", "watch"], apiGroups: ["", "apps"], resources: Array.from({ length: 10 }, (_, i) => `r${i}`) };
    const { ask, asked } = cluster({ a: [wide], b: "fails" }, () => true);
    const summary = await kubeSummary("prod", "ann", ["a", "b"], ask, "the relay asked about the first 2 of the cluster's namespaces");
    expect(asked).toEqual([]);
    expect(summary.status.clusterRules).toEqual([]);
    expect(summary.status.namespaces).toEqual([{ name: "a", resourceRules: [wide] }]);
    expect(summary.status.incomplete).toBe(true);
    expect(summary.status.evaluationError).toBe(
      `the relay asked about the first 2 of the cluster's namespaces; no answer for b; the relay asks the cluster at most ${MAX_CLUSTER_CHECKS} questions about rules that may hold cluster-wide`,
    );
  });
});
