/** AUTH_MODE=none at the front door: cluster names that are prototype properties are unknown clusters, not a 5xx. */
import { describe, expect, it } from "vitest";
import { relay } from "./helpers.ts";

describe("cluster names", () => {
  // The one property of Object.prototype that is also a DNS label, as cluster names must be.
  it("constructor is an unknown cluster (404), never a 5xx", async () => {
    const response = await relay("/clusters/constructor/api/v1/pods");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "NotFound", message: expect.stringContaining('cluster "constructor" is not configured') });
  });
});
