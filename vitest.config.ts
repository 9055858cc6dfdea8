import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { holdToPlatformHeap } from "./scripts/heap-limit.ts";
import LongestFirst, { FIRST_IN_GROUP } from "./test/kit/sequencer.ts";
import TimingReporter from "./test/kit/timing-reporter.ts";
import { TEST_JWT_SECRET } from "./test/kit/tokens.ts";

// The relay's isolate gets the heap a Durable Object has deployed, as under npm start: a test
// that outgrows it fails here as production would.
holdToPlatformHeap();

/** Test tuning shared by every Workers project: small windows and budgets, quick timers. */
const tuning = {
  WINDOW_EVENTS: "500",
  TOMBSTONES_MAX: "20",
  BOOKMARK_INTERVAL_SECONDS: "1",
  // Longer than an API server's wait (3 s) before it answers a watch from a resourceVersion ahead of it.
  UPSTREAM_STALL_SECONDS: "4",
  IDLE_GRACE_SECONDS: "3",
  // A request waits 5 s for its hub, not 10 (a first list that outlasts it takes a few slow pages),
  // but longer than an API server's wait (3 s) before it refuses a list at a resourceVersion ahead of it.
  SYNC_WAIT_SECONDS: "5",
  HUB_RETENTION_SECONDS: "8",
  SUBSCRIBER_BUDGET_BYTES: "262144",
  AUTH_RECHECK_SECONDS: "1",
  LIST_CACHE_SECONDS: "2",
  // A log longer than this makes a follower of the whole of it read its own history first.
  LOG_BUFFER_LINES: "20",
  LOG_IDLE_GRACE_SECONDS: "1",
  // An upstream's log read that does not answer (or stops) fails in 2 s, not 10.
  LOG_UPSTREAM_TIMEOUT_SECONDS: "2",
  // The tests' namespaces hold a few pods: every view's order is read through its index, as a large collection's is.
  VIEW_SCAN_OBJECTS: "0",
  SOAK_SEED: process.env.SOAK_SEED ?? "",
};

/**
 * Where a Workers project runs. `line`: one file at a time, as the files of a project share its
 * simulated clusters, whose users, faults and configuration some of them change. `apart`: two
 * files at a time, in a group of their own after the line (vitest runs a group's projects with
 * one number of workers, and refuses two numbers in one group): files that change no cluster
 * another file of that group uses and write only in namespaces of their own (`APART`, `JWT_AUTH`).
 * `beside`: a project of one file, in the end-to-end group, two files at a time, beside those files.
 */
type Lane = "line" | "apart" | "beside";
const LANES: Record<Lane, object> = {
  line: { fileParallelism: false, sequence: { groupOrder: 1 } },
  apart: { sequence: { groupOrder: 2 } },
  beside: { sequence: { groupOrder: 3 } },
};

function workers(name: string, include: string[], bindings: Record<string, string>, { exclude = [] as string[], lane = "line" as Lane } = {}) {
  return {
    plugins: [
      cloudflareTest(({ inject }) => {
        const sims = inject("simulators");
        const clusters: Record<string, { url: string; maxHubs?: number; subscribersPerHub?: number }> = { down: { url: "http://127.0.0.1:9" } };
        for (const [cluster, url] of Object.entries(sims)) if (cluster !== "default") clusters[cluster] = { url };
        clusters.quota!.maxHubs = 3;
        // Hot keys there: past two subscribers, new ones go to replica hubs (the soak's cross-checks
        // their histories against the roots').
        clusters.hot!.subscribersPerHub = 2;
        clusters.soak!.subscribersPerHub = 2;
        return {
          // workerd's informational log, which the pool turns on by default: an exception and
          // its stack for every hub a test crashes on purpose (abortAllDurableObjects()) and
          // every upstream connection it breaks on purpose (about 340 of the soak's 350 lines).
          // The relay's own lines and failed assertions print without it; WORKERD_VERBOSE=1
          // brings it back for a failure that needs it.
          verbose: process.env.WORKERD_VERBOSE === "1",
          wrangler: { configPath: "./wrangler.toml" },
          miniflare: {
            bindings: { UPSTREAM_URL: sims.default!, CLUSTERS: JSON.stringify(clusters), SIMULATORS: JSON.stringify(sims), ...tuning, ...bindings },
          },
        };
      }),
    ],
    // Each project starts simulated clusters of its own (its global setup); each file gets a
    // workerd of its own (the pool's isolation), so files share only their project's clusters.
    test: {
      name,
      include,
      exclude,
      globalSetup: ["test/setup/simulators.ts"],
      testTimeout: 30_000,
      ...LANES[lane],
    },
  };
}

/** The Workers project's longest file, which starts first in its group. */
const SOAK = FIRST_IN_GROUP[0]!;

/**
 * The `none` mode's Workers files that run two at a time, after the line (the files of the line
 * would otherwise go one after another beside an idle core once the benchmark's smoke run has
 * ended). Between them, each changes only clusters no other of them uses, and writes only in
 * namespaces of its own: lifecycle (faults on its own namespaces' paths of `default`; `evict`,
 * `slow`), fleet (faults and configuration of `fleet-a`, `fleet-b`; its `/clusters/*` reads the
 * others' clusters in its own namespace, and tolerates any but those two behind), faults
 * (`faults`: drops, stalls, a restart), cold (`cold`), metrics (`metrics`: drops, stalls, a
 * compaction), compact (`evict`), bookmarks (`quiet`), hot (`hot`), big-objects and list
 * (`default`). A file added here must keep that true.
 */
const APART = ["lifecycle", "fleet", "faults", "cold", "big-objects", "list", "compact", "metrics", "bookmarks", "hot"].map((file) => `test/worker/${file}.test.ts`);

/**
 * The `jwt` mode's files change no cluster and write only in namespaces of their own, but for
 * its auth file, which writes in the seeded ones and checks that none of its refusals reached
 * one: it runs beside them with clusters of its own.
 */
const JWT_AUTH = "test/worker-jwt/auth.test.ts";

/** The end-to-end file that measures time (the page's 300 ms targets over 100,000 pods): run last, with nothing beside it. */
const ALONE = ["test/e2e/page-scale.test.ts"];

/**
 * The benchmark's tools at their smallest (its comparison of two revisions, its heap probe),
 * which load the machine but measure no time: after the end-to-end files, the two side by side.
 */
const BENCH_TOOLS = ["test/e2e/bench-compare.test.ts", "test/e2e/bench-heap.test.ts"];

/**
 * The benchmark at its smallest, a few minutes of it: run by its global setup as the test run
 * starts, beside the Workers projects' files (one at a time, so a core is left), and awaited by
 * its test, last.
 */
const BENCH_SMOKE = "test/e2e/bench-smoke.test.ts";

/**
 * The `none` mode's bindings. Its tests reach the relay as http://relay.test
 * (test/worker/helpers.ts), which `none` mode, loopback-only by default against DNS rebinding,
 * answers only when named.
 */
const NONE = { AUTH_MODE: "none", ALLOWED_HOSTS: "relay.test" };

/** The `jwt` mode's bindings. */
const JWT = {
  AUTH_MODE: "jwt",
  AUTH_JWT_SECRET: TEST_JWT_SECRET,
  ALLOWED_ORIGINS: "https://dashboard.example",
  MAX_SUBSCRIPTIONS_PER_SUBJECT: "5",
  // Indexes for views' orders: a collection of more than 2 pods needs one; 3 builds an hour a subject, 12 a hub.
  VIEW_SCAN_OBJECTS: "2",
  MAX_VIEW_INDEX_BUILDS_PER_SUBJECT: "3",
  MAX_VIEW_INDEX_BUILDS_PER_HUB: "12",
  METRICS_TOKEN: "scraper-token-for-the-tests",
  // Every access allowed is logged too, which a test reads.
  LOG_LEVEL: "debug",
};

export default defineConfig({
  test: {
    // Logs (the relay's structured lines) only for tests that fail.
    silent: "passed-only",
    // Then where the time went: each project's wall time and the slowest files.
    reporters: ["default", new TimingReporter()],
    // Within a group, the soak first, so it runs beside the end-to-end files rather than after them.
    sequence: { sequencer: LongestFirst },
    // Two files at a time where files may run side by side (on a 2-core machine vitest would run
    // one): the groups run one after another, the pure modules first, then the Workers projects
    // one file at a time, then the end-to-end files two at a time (each starts processes of its
    // own, on ports the kernel picks), then those that measure time, alone.
    maxWorkers: 2,
    projects: [
      {
        // Pure modules and the simulator, in Node.
        // 15 s, not vitest's 5: these files run two at a time beside the benchmark's smoke run
        // starting up (its runtimes built and started), where a replay of 20 MB took 5.5 s.
        test: {
          name: "node",
          include: ["src/**/*.test.ts", "test/unit/**/*.test.ts", "test/sim/**/*.test.ts", "test/client/**/*.test.ts"],
          environment: "node",
          testTimeout: 15_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // Real processes (npm start, wrangler dev, the simulator) and real clients.
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          exclude: [...ALONE, ...BENCH_TOOLS, BENCH_SMOKE],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 3 },
        },
      },
      {
        test: { name: "e2e-alone", include: ALONE, environment: "node", testTimeout: 120_000, hookTimeout: 120_000, fileParallelism: false },
      },
      {
        test: { name: "bench-tools", include: BENCH_TOOLS, environment: "node", testTimeout: 120_000, hookTimeout: 120_000, sequence: { groupOrder: 4 } },
      },
      {
        test: { name: "bench-smoke", include: [BENCH_SMOKE], globalSetup: ["test/setup/bench-smoke.ts"], environment: "node", testTimeout: 120_000, hookTimeout: 120_000, fileParallelism: false },
      },
      // The Worker and its hubs in workerd, against simulated API servers started in Node; a
      // project or more per AUTH_MODE, since it is a Worker-wide setting.
      workers("workers", ["test/worker/**/*.test.ts"], NONE, { exclude: [SOAK, ...APART] }),
      workers("workers-apart", APART, NONE, { lane: "apart" }),
      // The soak (about four minutes), with simulated clusters of its own, beside the end-to-end
      // files rather than in the line of the files above.
      workers("workers-soak", [SOAK], NONE, { lane: "beside" }),
      workers("workers-jwt", ["test/worker-jwt/**/*.test.ts"], JWT, { exclude: [JWT_AUTH], lane: "apart" }),
      workers("workers-jwt-auth", [JWT_AUTH], JWT, { lane: "apart" }),
      // The users of kube mode's clusters are the files' to replace: one at a time.
      workers("workers-kube", ["test/worker-kube/**/*.test.ts"], { AUTH_MODE: "kube" }),
    ],
  },
});
