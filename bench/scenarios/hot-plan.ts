/**
 * @module
 * What the `hot` scenario measures in each mode, and the relay clusters that needs.
 */
import { sizesFor, type Mode, type Sizes } from "../modes.ts";

const SOLO = "bench-hot-solo";
export const clusterOf = (subscribers: number, replicas: number) => (replicas === 0 ? SOLO : `bench-hot-${subscribers / replicas}`);

export interface Measurement {
  subscribers: number;
  replicas: number;
  storm: boolean;
  measureMs: number;
  split: boolean;
}

/** The main size without replicas and with each count; the hop's two, and again `split` (a thread per tier). */
export function plan(sizes: Sizes): Measurement[] {
  const { subscribers, replicas, hop, measureMs } = sizes.hot;
  const hopOf = (split: boolean) => [0, hop.replicas].map((r) => ({ subscribers: hop.subscribers, replicas: r, storm: false, measureMs: hop.measureMs, split }));
  return [...[0, ...replicas].map((r) => ({ subscribers, replicas: r, storm: true, measureMs, split: false })), ...hopOf(false), ...hopOf(true)];
}

/** One cluster per share any mode asks for, and one that never spreads: the relay starts before a mode matters. */
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
