/**
 * @module
 * How big each scenario runs in each mode: `quick` (the default) fits in five minutes on 2 cores,
 * `full` adds sizes and longer windows, `smoke` is the smallest run that exercises everything.
 */

export type Mode = "quick" | "full" | "smoke";

export interface Sizes {
  fanout: {
    subscribers: number[];
    /** Upstream changes a second on the watched collection. */
    rates: number[];
    memorySubscribers: number[];
    /** Where HTTP watches are measured (`direct`'s too: it has no other transport). */
    http: { subscribers: number[]; rates: number[] };
    /** Where secondary systems (`relay-proxied`) are measured too: enough to show what they cost. */
    secondary: { subscribers: number[]; rates: number[] };
    warmupMs: number;
    measureMs: number;
  };
  burst: { subscribers: number[]; changes: number; timeoutMs: number; chunkPerEvent: boolean[] };
  storm: {
    subscribers: number[];
    missed: number;
    timeoutMs: number;
    /** How long to wait for a system to go idle once the storm's subscribers have left. */
    settleMs: number;
  };
  keys: { keys: number[]; subscribersPerKey: number; rate: number; warmupMs: number; measureMs: number };
  sockets: { clients: number; watchesPerClient: number; rate: number; warmupMs: number; measureMs: number };
  /** The hop's longer `measureMs` sees a p50 difference of tens of ms; each `replicas` divides subscribers. */
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
  views: { objects: number; views: number; limit: number; rate: number; refetchers: number; warmupMs: number; measureMs: number; timeoutMs: number };
  snapshot: { objects: number; repeats: number; pageLimit: number; samples: number };
  big: { objects: number; subscribers: number; resumes: number; missed: number; churn: number; churnMs: number; pageLimit: number; sampleMs: number; timeoutMs: number };
  hubs: { keys: number; objects: number; churn: number; churnMs: number; sampleMs: number; timeoutMs: number };
  fleet: { clusters: number; pods: number; rate: number; subscribers: number; warmupMs: number; measureMs: number; missed: number; downMs: number; viewLimit: number; timeoutMs: number };
  profiles: ProfileWorkload[];
  /** Load-generator processes: one per core, so the generator can use the whole machine. */
  loadgens: number;
  /**
   * How long subscribers may take to reach a window's last resourceVersion (`behindAtEnd`): smoke's
   * windows are too short for a rate. Null where throughput is measured (saturated, never caught up).
   */
  reachEndMs: number | null;
}

export interface ProfileWorkload {
  name: "fan-out" | "fan-out over HTTP" | "many keys" | "relay socket";
  /** `socket`: each of `subscribersPerKey` clients holds all `keys` watches on one relay socket. */
  transport: "ws" | "http" | "socket";
  keys: number;
  subscribersPerKey: number;
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

/** The four profiles: fan-out over each transport, many keys at 20 events/s, 5 watches a relay socket. */
function profilesAt(p: { fanout: number; rate: number; keys: [number, number]; clients: number; socketRate: number; ms: number }): ProfileWorkload[] {
  const [keys, perKey] = p.keys;
  return [
    { name: "fan-out", transport: "ws", keys: 1, subscribersPerKey: p.fanout, rate: p.rate, ms: p.ms },
    { name: "fan-out over HTTP", transport: "http", keys: 1, subscribersPerKey: p.fanout, rate: p.rate, ms: p.ms },
    { name: "many keys", transport: "ws", keys, subscribersPerKey: perKey, rate: 20, ms: p.ms },
    { name: "relay socket", transport: "socket", keys: 5, subscribersPerKey: p.clients, rate: p.socketRate, ms: p.ms },
  ];
}

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
        // 2 s, not 0.5: a sampler that looks every 500 µs missed all of the isolate's work on 10 events.
        profiles: profilesAt({ fanout: 5, rate: 20, keys: [3, 2], clients: 4, socketRate: 20, ms: 2000 }),
        loadgens: 2,
        reachEndMs: 10_000,
      };
    case "quick":
      return {
        fanout: fanoutAt([1000], [100, 1000], { subscribers: [1000], rates: [100] }, 750, 1500),
        burst: { subscribers: [500], changes: 400, timeoutMs: 30_000, chunkPerEvent: [false] },
        // Long enough for the per-event relay's storm (some 10 s here): its row has a time, not a count.
        storm: { subscribers: [1000], missed: 1000, timeoutMs: 20_000, settleMs: 20_000 },
        // Many keys' steady state comes 3-4 s into the churn, once the hubs' gathers lengthen (0001).
        keys: { keys: [100], subscribersPerKey: 3, rate: 20, warmupMs: 4000, measureMs: 6000 },
        sockets: { clients: 200, watchesPerClient: 5, rate: 40, warmupMs: 750, measureMs: 2000 },
        hot: { subscribers: 2000, replicas: [2, 4, 8], rate: 100, hop: { subscribers: 1000, replicas: 1, measureMs: 10_000 }, missed: 1000, warmupMs: 1000, measureMs: 3000, timeoutMs: 30_000 },
        views: { objects: 100_000, views: 200, limit: 50, rate: 100, refetchers: 20, warmupMs: 2000, measureMs: 10_000, timeoutMs: 600_000 },
        snapshot: { objects: 10_000, repeats: 2, pageLimit: 500, samples: 12 },
        big: { objects: 200_000, subscribers: 10, resumes: 1000, missed: 1000, churn: 100, churnMs: 30_000, pageLimit: 500, sampleMs: 1000, timeoutMs: 900_000 },
        hubs: { keys: 1000, objects: 1000, churn: 5, churnMs: 10_000, sampleMs: 1000, timeoutMs: 600_000 },
        fleet: { clusters: 4, pods: 2000, rate: 50, subscribers: 50, warmupMs: 1000, measureMs: 5000, missed: 100, downMs: 5000, viewLimit: 50, timeoutMs: 120_000 },
        profiles: profilesAt({ fanout: 1000, rate: 100, keys: [100, 3], clients: 200, socketRate: 40, ms: 2000 }),
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
        // A million pods (3.5 GB of JSON): initial states to 10 subscribers, as 100 would move 340 GB
        // a transport (100 at 200,000 pods are in docs/decisions/0015).
        big: { objects: 1_000_000, subscribers: 10, resumes: 1000, missed: 1000, churn: 100, churnMs: 60_000, pageLimit: 500, sampleMs: 1000, timeoutMs: 900_000 },
        hubs: { keys: 1000, objects: 1000, churn: 5, churnMs: 30_000, sampleMs: 1000, timeoutMs: 600_000 },
        fleet: { clusters: 10, pods: 10_000, rate: 50, subscribers: 200, warmupMs: 2000, measureMs: 10_000, missed: 100, downMs: 30_000, viewLimit: 50, timeoutMs: 600_000 },
        profiles: profilesAt({ fanout: 1000, rate: 100, keys: [100, 3], clients: 200, socketRate: 100, ms: 10_000 }),
        loadgens,
        reachEndMs: null,
      };
  }
}
