import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Logs (the relay's structured lines) only for tests that fail.
    silent: "passed-only",
    projects: [
      {
        // Pure modules and the simulator, in Node.
        test: { name: "node", include: ["test/unit/**/*.test.ts", "test/sim/**/*.test.ts", "test/client/**/*.test.ts"], environment: "node" },
      },
      {
        // Real processes (npm start, wrangler dev, the simulator) and real clients.
        test: { name: "e2e", include: ["test/e2e/**/*.test.ts"], environment: "node", testTimeout: 120_000, hookTimeout: 120_000 },
      },
      {
        // The Worker and its hubs in workerd, against simulated API servers started in Node.
        plugins: [
          cloudflareTest(({ inject }) => {
            const sims = inject("simulators");
            const clusters: Record<string, { url: string }> = { down: { url: "http://127.0.0.1:9" } };
            for (const [name, url] of Object.entries(sims)) if (name !== "default") clusters[name] = { url };
            return {
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  UPSTREAM_URL: sims.default!,
                  CLUSTERS: JSON.stringify(clusters),
                  SIMULATORS: JSON.stringify(sims),
                  AUTH_MODE: "none",
                  WINDOW_EVENTS: "500",
                  BOOKMARK_INTERVAL_SECONDS: "1",
                  UPSTREAM_STALL_SECONDS: "3",
                  IDLE_GRACE_SECONDS: "3",
                  SUBSCRIBER_BUDGET_BYTES: "262144",
                  SOAK_SEED: process.env.SOAK_SEED ?? "",
                },
              },
            };
          }),
        ],
        test: { name: "workers", include: ["test/worker/**/*.test.ts"], globalSetup: ["test/setup/simulators.ts"], testTimeout: 30_000 },
      },
    ],
  },
});
