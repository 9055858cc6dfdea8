/**
 * @module
 * What the `hot` scenario measures in each mode (`plan`), and the relay clusters those
 * measurements need (`hotClusters`), which the relay is started with before any scenario runs.
 */
import { sizesFor, type Mode, type Sizes } from "../modes.ts";

const SOLO = "bench-hot-solo";
export const clusterOf = (subscribers: number, replicas: number) => (replicas === 0 ? SOLO : `bench-hot-${subscribers / replicas}`);

export interface Measurement {
  subscribers: number;
  replicas: number;
  storm: boolean;
  measureMs: number;
  /** On a relay whose replica hubs run in a second workerd. */
  split: boolean;
}

/**
 * Every measurement a mode makes: the main size without replicas and with each count, and the
 * hop's two; then the hop's two again on a relay whose replicas have a workerd, so a thread, of
 * their own, as each hub has deployed: there the hop is measured apart from one thread's queue.
 */
export function plan(sizes: Sizes): Measurement[] {
  const { subscribers, replicas, hop, measureMs } = sizes.hot;
  const hopOf = (split: boolean) => [0, hop.replicas].map((r) => ({ subscribers: hop.subscribers, replicas: r, storm: false, measureMs: hop.measureMs, split }));
  return [...[0, ...replicas].map((r) => ({ subscribers, replicas: r, storm: true, measureMs, split: false })), ...hopOf(false), ...hopOf(true)];
}

/**
 * The relay's `CLUSTERS` for this scenario: one per share any mode asks for, each on `upstreamUrl`,
 * and one that never spreads. The relay starts before the mode's sizes matter, so it has them all.
 */
export function hotClusters(upstreamUrl: string): Record<string, { url: string; subscribersPerHub: number }> {
  const shares = new Set<number>();
  for (const mode of ["smoke", "quick", "full"] as Mode[]) {
    for (const { subscribers, replicas } of plan(sizesFor(mode, 2))) {
      if (replicas === 0) continue;
      if (subscribers % replicas !== 0) throw new Error(`hot: ${replicas} replicas must divide ${subscribers} subscribers`);
      shares.add(subscribers / replicas);
    }
  }
  const clusters: Record<string, { url: string; subscribersPerHub: number }> = { [SOLO]: { url: upstreamUrl, subscribersPerHub: 1_000_000_000 } };
  for (const share of shares) clusters[`bench-hot-${share}`] = { url: upstreamUrl, subscribersPerHub: share };
  return clusters;
}
