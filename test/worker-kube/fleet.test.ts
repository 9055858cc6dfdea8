/**
 * AUTH_MODE=kube on a merged key: not served yet (each member's cluster would have to be asked
 * for the subject's rights, and asked again on every re-check), refused with a Status that says so.
 */
import { describe, expect, it } from "vitest";
import { podsPath } from "../kit/paths.ts";
import { relay, Sim } from "../worker/helpers.ts";

describe("a merged key in AUTH_MODE=kube", () => {
  it("is refused with a Status that says to watch each cluster", async () => {
    await new Sim("fleet-a").setUsers([{ name: "kim", tokens: ["kim-token"], rules: [{ verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"] }] }]);
    const response = await relay(`/clusters/fleet-a,fleet-b${podsPath("x")}`, { headers: { authorization: "Bearer kim-token" } });
    expect(response.status).toBe(400);
    const status = (await response.json()) as { kind: string; message: string };
    expect(status.kind).toBe("Status");
    expect(status.message).toContain("AUTH_MODE=kube");
  });
});
