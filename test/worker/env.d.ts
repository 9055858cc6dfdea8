// Types for the Workers test runtime: `env` is the relay's Env plus test-only bindings, and
// `exports` (from "cloudflare:workers") are the relay's own module exports.
import type { Env as RelayEnv } from "../../src/env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends RelayEnv {
      /** JSON: cluster name → simulated API server URL (test/setup/simulators.ts). */
      SIMULATORS: string;
      /** Replays a soak run's random choices (test/worker/soak.test.ts). */
      SOAK_SEED: string;
    }
    interface GlobalProps {
      mainModule: typeof import("../../src/index.ts");
      durableNamespaces: "WatchHub";
    }
  }
}
