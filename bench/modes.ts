/**
 * @module
 * How big each scenario runs in each mode. `quick` (the default) fits in five minutes on a
 * 2-core machine (`estimate.ts` says how long a run will take): the scenarios of many minutes
 * (`FULL_ONLY` in run.ts) are left out of it, and it measures fan-out at the size the targets name; `full`
 * runs every scenario, adds the other sizes and longer windows; `smoke` is the smallest run that
 * still exercises every system and scenario, for the test that keeps the bench working.
 */

export type Mode = "quick" | "full" | "smoke";

export interface Sizes {
  fanout: {
    subscribers: number[];
    /** Upstream changes a second on the watched collection. */
    rates: number[];
    /** Sizes at which idle memory per subscriber is measured (before any load). */
    memorySubscribers: number[];
    /** Where HTTP watches are measured (`direct`'s too: it has no other transport). */
    http: { subscribers: number[]; rates: number[] };
    /** Where secondary systems (`relay-proxied`, through wrangler dev's proxy) are measured too: enough to show what they cost. */
    secondary: { subscribers: number[]; rates: number[] };
    /** Churn before measuring, so every system is in its steady state. */
    warmupMs: number;
    measureMs: number;
  };
  /**
   * `changes` made at once on one collection of slim (about 2.5 KB) pods, watched by each number
   * of subscribers; with the upstream writing them together (one chunk), and with each in a chunk
   * of its own (`chunkPerEvent`, as an API server streams a burst).
   */
  burst: { subscribers: number[]; changes: number; timeoutMs: number; chunkPerEvent: boolean[] };
  storm: {
    subscribers: number[];
    /** Changes made while every subscriber is away. */
    missed: number;
    timeoutMs: number;
    /** How long to wait for a system to go idle once the storm's subscribers have left. */
    settleMs: number;
  };
  keys: { keys: number[]; subscribersPerKey: number; rate: number; warmupMs: number; measureMs: number };
  /** `clients` each watching `watchesPerClient` collections (distinct selectors, each matching every pod) at `rate` events/s. */
  sockets: { clients: number; watchesPerClient: number; rate: number; warmupMs: number; measureMs: number };
  /**
   * One hot key: `subscribers` at `rate`, per-event and batched, without replicas and with each
   * count of `replicas`, then a storm of `missed` changes; and the extra hop: `hop.subscribers`
   * without replicas and on `hop.replicas`, each measured for `hop.measureMs` (a p50 difference of
   * tens of ms needs a longer window than the rest). One replica holding them all is the hop
   * alone: the same fan-out as one hub's, one hop further, with no replicas' turns queued behind
   * one another on a thread they share. Each count must divide its subscribers.
   */
  hot: {
    subscribers: number;
    replicas: number[];
    rate: number;
    hop: { subscribers: number; replicas: number; measureMs: number };
    missed: number;
    warmupMs: number;
    measureMs: number;
    timeoutMs: number;
  };
  /**
   * Live views of one collection of `objects` pods changing at `rate`: `views` views of `limit`
   * rows (various sorts and filters) against a full watch of the collection and `refetchers`
   * notify-then-refetch clients, each in a window of its own.
   */
  views: { objects: number; views: number; limit: number; rate: number; refetchers: number; warmupMs: number; measureMs: number; timeoutMs: number };
  /**
   * A list of `objects` pods, whole and in pages of `pageLimit`; then `samples` pairs of a
   * consistent list (`resourceVersion` unset) and one of any state (`resourceVersion=0`), timed
   * for what a consistent read adds.
   */
  snapshot: { objects: number; repeats: number; pageLimit: number; samples: number };
  /**
   * One collection of `objects` pods of about 3.5 KB through one hub (a relay of its own):
   * `subscribers` getting its initial state at once (over each transport), `resumes` resuming at
   * once after `missed` changes, `churn` changes a second for `churnMs`, a relist after a 410
   * that `missed` changes made while the hub's watch was stalled, a restart.
   */
  big: { objects: number; subscribers: number; resumes: number; missed: number; churn: number; churnMs: number; pageLimit: number; sampleMs: number; timeoutMs: number };
  /**
   * `keys` hubs (distinct selectors) over one collection of `objects` pods in one workerd, a
   * subscriber on each; then `churn` changes a second for `churnMs`. Memory is sampled every
   * `sampleMs` in both.
   */
  hubs: { keys: number; objects: number; churn: number; churnMs: number; sampleMs: number; timeoutMs: number };
  /**
   * One watch across clusters: `clusters` simulated clusters (a simulator process each) of `pods`
   * pods, each churned at `rate` changes/s, relayed as one merged key with `subscribers` on it
   * (and the same subscribers on every cluster's own key, for the comparison); a storm of their
   * resumes after `missed` changes a cluster; one cluster down for `downMs`; a live view of
   * `viewLimit` rows on the merged key.
   */
  fleet: { clusters: number; pods: number; rate: number; subscribers: number; warmupMs: number; measureMs: number; missed: number; downMs: number; viewLimit: number; timeoutMs: number };
  /** CPU profiles of the relay: one key with many subscribers (fan-out, over each transport), many keys with a few each (intake), browser-like clients on relay sockets (the socket's hop). */
  profiles: ProfileWorkload[];
  /** Load-generator processes: one per core by default, so the generator can use the whole machine. */
  loadgens: number;
  /**
   * After each window of live delivery, wait up to this long for every subscriber to reach the
   * window's last upstream resourceVersion, and count those that did not (`behindAtEnd`). The
   * smoke run proves delivery this way, a count that waits for the events: its sub-second
   * windows are too short for a rate to say anything on a busy machine. Null in the modes that
   * measure throughput, where a saturated system under churn never catches up.
   */
  reachEndMs: number | null;
}

export interface ProfileWorkload {
  name: "fan-out" | "fan-out over HTTP" | "many keys" | "relay socket";
  /** How the subscribers watch: WebSocket (one event a message), HTTP (kubectl's, informers'), or a relay socket: each of `subscribersPerKey` clients holds all `keys` watches on one socket. */
  transport: "ws" | "http" | "socket";
  keys: number;
  subscribersPerKey: number;
  /** Upstream changes a second (every key sees all of them). */
  rate: number;
  ms: number;
}

/** Fan-out at `subscribers` × `rates`, idle memory at each size, HTTP watches and secondary systems `at` some of them. */
const fanoutAt = (subscribers: number[], rates: number[], at: { subscribers: number[]; rates: number[] }, warmupMs: number, measureMs: number): Sizes["fanout"] => ({
  subscribers,
  rates,
  memorySubscribers: [...subscribers],
  http: at,
  secondary: { ...at },
  warmupMs,
  measureMs,
});

export function sizesFor(mode: Mode, cores: number): Sizes {
  const loadgens = Math.max(2, cores);
  switch (mode) {
    case "smoke":
      return {
        fanout: fanoutAt([5], [20], { subscribers: [5], rates: [20] }, 200, 600),
        burst: { subscribers: [5], changes: 40, timeoutMs: 10_000, chunkPerEvent: [false, true] },
        storm: { subscribers: [5], missed: 20, timeoutMs: 10_000, settleMs: 5000 },
        keys: { keys: [3], subscribersPerKey: 2, rate: 20, warmupMs: 200, measureMs: 600 },
        sockets: { clients: 4, watchesPerClient: 5, rate: 20, warmupMs: 200, measureMs: 600 },
        hot: { subscribers: 6, replicas: [1], rate: 20, hop: { subscribers: 4, replicas: 1, measureMs: 600 }, missed: 20, warmupMs: 200, measureMs: 600, timeoutMs: 10_000 },
        views: { objects: 300, views: 10, limit: 10, rate: 20, refetchers: 2, warmupMs: 300, measureMs: 1000, timeoutMs: 60_000 },
        snapshot: { objects: 200, repeats: 2, pageLimit: 50, samples: 3 },
        big: { objects: 1000, subscribers: 5, resumes: 20, missed: 50, churn: 50, churnMs: 1000, pageLimit: 100, sampleMs: 250, timeoutMs: 30_000 },
        hubs: { keys: 5, objects: 100, churn: 20, churnMs: 1000, sampleMs: 250, timeoutMs: 30_000 },
        fleet: { clusters: 2, pods: 50, rate: 10, subscribers: 3, warmupMs: 200, measureMs: 1000, missed: 10, downMs: 1500, viewLimit: 10, timeoutMs: 30_000 },
        // 2 s, not 0.5: the isolate's work on 10 events was brief enough for a sampler that looks
        // every 500 µs to miss all of it, and the smoke test expects to see it at work.
        profiles: [
          { name: "fan-out", transport: "ws", keys: 1, subscribersPerKey: 5, rate: 20, ms: 2000 },
          { name: "fan-out over HTTP", transport: "http", keys: 1, subscribersPerKey: 5, rate: 20, ms: 2000 },
          { name: "many keys", transport: "ws", keys: 3, subscribersPerKey: 2, rate: 20, ms: 2000 },
          { name: "relay socket", transport: "socket", keys: 5, subscribersPerKey: 4, rate: 20, ms: 2000 },
        ],
        loadgens: 2,
        reachEndMs: 10_000,
      };
    case "quick":
      return {
        fanout: fanoutAt([1000], [100, 1000], { subscribers: [1000], rates: [100] }, 750, 1500),
        // The burst as the upstream writes it in one chunk; a chunk per event with --full (or --burst-upstream).
        burst: { subscribers: [500], changes: 400, timeoutMs: 30_000, chunkPerEvent: [false] },
        // Long enough for the per-event relay's storm (some 10 s here), so its row has a time, not a count.
        storm: { subscribers: [1000], missed: 1000, timeoutMs: 20_000, settleMs: 20_000 },
        // Many keys' steady state comes some 3-4 s into the churn, once the hubs' gathers have
        // lengthened (docs/decisions/0001): the window starts after that, not in the onset.
        keys: { keys: [100], subscribersPerKey: 3, rate: 20, warmupMs: 4000, measureMs: 6000 },
        sockets: { clients: 200, watchesPerClient: 5, rate: 40, warmupMs: 750, measureMs: 2000 },
        hot: { subscribers: 2000, replicas: [2, 4, 8], rate: 100, hop: { subscribers: 1000, replicas: 1, measureMs: 10_000 }, missed: 1000, warmupMs: 1000, measureMs: 3000, timeoutMs: 30_000 },
        views: { objects: 100_000, views: 200, limit: 50, rate: 100, refetchers: 20, warmupMs: 2000, measureMs: 10_000, timeoutMs: 600_000 },
        snapshot: { objects: 10_000, repeats: 2, pageLimit: 500, samples: 12 },
        big: { objects: 200_000, subscribers: 10, resumes: 1000, missed: 1000, churn: 100, churnMs: 30_000, pageLimit: 500, sampleMs: 1000, timeoutMs: 900_000 },
        hubs: { keys: 1000, objects: 1000, churn: 5, churnMs: 10_000, sampleMs: 1000, timeoutMs: 600_000 },
        fleet: { clusters: 4, pods: 2000, rate: 50, subscribers: 50, warmupMs: 1000, measureMs: 5000, missed: 100, downMs: 5000, viewLimit: 50, timeoutMs: 120_000 },
        profiles: [
          { name: "fan-out", transport: "ws", keys: 1, subscribersPerKey: 1000, rate: 100, ms: 2000 },
          { name: "fan-out over HTTP", transport: "http", keys: 1, subscribersPerKey: 1000, rate: 100, ms: 2000 },
          { name: "many keys", transport: "ws", keys: 100, subscribersPerKey: 3, rate: 20, ms: 2000 },
          { name: "relay socket", transport: "socket", keys: 5, subscribersPerKey: 200, rate: 40, ms: 2000 },
        ],
        loadgens,
        reachEndMs: null,
      };
    case "full":
      return {
        fanout: fanoutAt([100, 1000, 5000], [100, 1000], { subscribers: [100, 1000, 5000], rates: [100, 1000] }, 2000, 10_000),
        burst: { subscribers: [500, 2000], changes: 400, timeoutMs: 120_000, chunkPerEvent: [false, true] },
        storm: { subscribers: [1000, 5000], missed: 1000, timeoutMs: 120_000, settleMs: 120_000 },
        keys: { keys: [100, 1000], subscribersPerKey: 3, rate: 20, warmupMs: 4000, measureMs: 10_000 },
        sockets: { clients: 200, watchesPerClient: 5, rate: 100, warmupMs: 2000, measureMs: 10_000 },
        hot: { subscribers: 5000, replicas: [2, 4, 8], rate: 100, hop: { subscribers: 1000, replicas: 1, measureMs: 10_000 }, missed: 1000, warmupMs: 2000, measureMs: 10_000, timeoutMs: 120_000 },
        views: { objects: 100_000, views: 200, limit: 50, rate: 100, refetchers: 20, warmupMs: 2000, measureMs: 30_000, timeoutMs: 600_000 },
        snapshot: { objects: 10_000, repeats: 10, pageLimit: 500, samples: 50 },
        // A million pods (about 3.5 GB of JSON, 4.7 GB of the hub's storage). Initial states go
        // to 10 subscribers at once, as in quick mode: 100 would move 340 GB a transport. 100 at
        // 200,000 pods are in docs/decisions/0015.
        big: { objects: 1_000_000, subscribers: 10, resumes: 1000, missed: 1000, churn: 100, churnMs: 60_000, pageLimit: 500, sampleMs: 1000, timeoutMs: 900_000 },
        hubs: { keys: 1000, objects: 1000, churn: 5, churnMs: 30_000, sampleMs: 1000, timeoutMs: 600_000 },
        fleet: { clusters: 10, pods: 10_000, rate: 50, subscribers: 200, warmupMs: 2000, measureMs: 10_000, missed: 100, downMs: 30_000, viewLimit: 50, timeoutMs: 600_000 },
        profiles: [
          { name: "fan-out", transport: "ws", keys: 1, subscribersPerKey: 1000, rate: 100, ms: 10_000 },
          { name: "fan-out over HTTP", transport: "http", keys: 1, subscribersPerKey: 1000, rate: 100, ms: 10_000 },
          { name: "many keys", transport: "ws", keys: 100, subscribersPerKey: 3, rate: 20, ms: 10_000 },
          { name: "relay socket", transport: "socket", keys: 5, subscribersPerKey: 200, rate: 100, ms: 10_000 },
        ],
        loadgens,
        reachEndMs: null,
      };
  }
}
