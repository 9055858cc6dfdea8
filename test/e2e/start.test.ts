import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupAlive, lines, startRelay, type RunningRelay } from "./harness.ts";

describe("npm start", () => {
  let relay: RunningRelay;
  beforeAll(async () => {
    relay = await startRelay({ SIM_CHURN: "20" });
  });
  afterAll(async () => relay?.stop());

  it("prints what it started and where", () => {
    expect(relay.output()).toMatch(/simulated cluster at http:\/\/127\.0\.0\.1:\d+/);
    expect(relay.output()).toContain("AUTH_MODE=none");
    expect(relay.output()).toContain(`relay ready at ${relay.url}`);
  });

  it("curl -N on a watch URL streams churn events", async () => {
    const curl = lines("curl", ["-sN", `${relay.url}/api/v1/pods?watch=1`]);
    try {
      const initial = JSON.parse(await curl.next(() => true));
      expect(initial).toMatchObject({ type: "ADDED", object: { kind: "Pod", apiVersion: "v1" } });
      // Live churn, not just the initial state.
      const live = JSON.parse(await curl.next((l) => /"type":"(MODIFIED|DELETED)"/.test(l)));
      expect(live.object.metadata.resourceVersion).toMatch(/^\d+$/);
    } finally {
      curl.stop();
    }
  });

  it("Ctrl-C stops everything it started", async () => {
    const pid = relay.process.pid!;
    const simUrl = /simulated cluster at (http:\/\/127\.0\.0\.1:\d+)/.exec(relay.output())![1]!;
    await relay.stop();
    expect(groupAlive(pid)).toBe(false);
    await expect(fetch(`${relay.url}/version`)).rejects.toThrow();
    await expect(fetch(`${simUrl}/version`)).rejects.toThrow();
  });
});
