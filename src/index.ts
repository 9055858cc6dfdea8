/**
 * @module
 * The Worker entry: the relay's HTTP app and the Durable Object classes it routes to.
 */
import type { Env } from "./env.ts";
import { createApp } from "./http/app.ts";

export { WatchHub } from "./hub/hub.ts";
export { ListCache } from "./lists/list-cache.ts";
export { LogHub } from "./logs/hub.ts";
export { WatchMux } from "./mux/mux.ts";
export { Quota } from "./quota/quota.ts";
export { MetricsRegistry } from "./metrics/registry.ts";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
