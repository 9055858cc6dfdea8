/**
 * AUTH_MODE=jwt at the front door: the token is checked before the cluster is looked up, so
 * nobody without a valid token learns which clusters exist.
 */
import { describe, expect, it } from "vitest";
import { relay } from "../worker/helpers.ts";
import { jwtFor, TEST_JWT_SECRET } from "../kit/tokens.ts";

const rules = [{ apiGroups: ["*"], resources: ["*"], namespaces: ["*"] }];
const token = (secret = TEST_JWT_SECRET) => jwtFor("prober", rules, { secret });

async function answer(path: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const response = await relay(path, { headers });
  if (response.status < 400) {
    await response.body?.cancel();
    return { status: response.status, body: undefined };
  }
  return { status: response.status, body: await response.json() };
}

describe("cluster names cannot be probed before authentication", () => {
  it("without a valid token, an unknown cluster answers exactly as a known one", async () => {
    const refused: Array<Record<string, string>> = [{}, { authorization: `Bearer ${await token("another-secret-of-reasonable-length")}` }, { authorization: "Bearer x" }];
    for (const headers of refused) {
      const known = await answer("/clusters/other/api/v1/pods", headers);
      expect(known.status).toBe(401);
      for (const name of ["nowhere", "constructor"]) expect(await answer(`/clusters/${name}/api/v1/pods`, headers)).toEqual(known);
    }
  });

  it("with one, an unknown cluster is a 404 (and a prototype property is no cluster)", async () => {
    const headers = { authorization: `Bearer ${await token()}` };
    expect((await answer("/clusters/other/api/v1/pods", headers)).status).toBe(200);
    for (const name of ["nowhere", "constructor"]) {
      expect(await answer(`/clusters/${name}/api/v1/pods`, headers)).toEqual({
        status: 404,
        body: expect.objectContaining({ message: expect.stringContaining(`cluster "${name}" is not configured`) }),
      });
    }
  });
});
