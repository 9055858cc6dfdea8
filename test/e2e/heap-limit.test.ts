/**
 * The local runtime holds the relay to the heap a Durable Object has deployed (128 MB): a
 * relay configured to keep more than that in memory dies here as it would be reset there, and
 * `npm start` says so in one line that names the limit.
 */
import { describe, expect, it } from "vitest";
import { simulatorUrl } from "./kube.ts";
import { processExit, startRelay } from "./harness.ts";

describe("the platform's heap limit, locally", () => {
  it("a relay told to hold 4 GB of lines in memory dies of the 128 MB heap, and npm start says so", async () => {
    // Every line of the window held in memory, and a window as large as it likes.
    const relay = await startRelay({ SIM_CHURN: "0", LINE_MEMORY_BYTES: "4000000000", WINDOW_BYTES: "4000000000", WINDOW_EVENTS: "1000000" });
    try {
      const sim = simulatorUrl(relay);
      const pods = `${sim}/api/v1/namespaces/default/pods`;
      const created = await fetch(pods, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ metadata: { name: "fat" }, spec: { containers: [{ name: "c", image: "i" }] } }),
      });
      expect(created.status).toBe(201);
      // A watcher keeps the hub's upstream watch, and its window, live.
      const watch = await fetch(`${relay.url}/api/v1/namespaces/default/pods?watch=1`);
      const reader = watch.body!.getReader();
      await reader.read();
      // 1 MB a change: 200 of them are well past 128 MB held as lines.
      const fat = "x".repeat(1024 * 1024);
      for (let i = 0; i < 200 && relay.process.exitCode === null; i++) {
        const patched = await fetch(`${pods}/fat`, {
          method: "PATCH",
          headers: { "content-type": "application/merge-patch+json" },
          body: JSON.stringify({ metadata: { annotations: { fat: `${i}${fat}` } } }),
        }).catch((e: unknown) => e as Error);
        // The simulated cluster runs in npm start's process, and goes with it as the relay dies.
        if (patched instanceof Error) break;
      }
      await reader.cancel().catch(() => undefined);
      expect(await relay.exitCode()).toBe(1);
      const said = relay
        .output()
        .split("\n")
        .filter((line) => line.startsWith("[start] the relay ran out of memory"));
      expect(said).toHaveLength(1);
      expect(said[0]).toContain("128 MB heap a Durable Object has deployed");
      await processExit(relay.pids.workerd);
    } finally {
      await relay.stop();
    }
  });
});
