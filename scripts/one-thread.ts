/**
 * @module
 * What the relay is told by default when it runs on one machine (`npm start`, `npm run dev`,
 * the benchmark) rather than deployed. workerd runs every Durable Object of its process on one
 * thread, so a hot key's replica hubs (DESIGN.md, "Hot keys"), which deployed run on threads of
 * their own, add a hop and a commit per event here and no capacity: in paired benchmark runs,
 * one hub of 1,000 per-event WebSocket subscribers delivered 1.13–1.55× the events of the tree
 * the deployed threshold (500 a hub) made of them, at 0.61–0.85× its CPU per event
 * (docs/decisions/0005). So locally a key stays one hub unless `SUBSCRIBERS_PER_HUB`, or a cluster's
 * `subscribersPerHub`, says otherwise.
 */

/** Subscribers a hub serves before its key gets replicas, on one thread: all of them. */
const ONE_THREAD_SUBSCRIBERS_PER_HUB = "1000000000";

/** The relay's variables with one machine's defaults under them: what is set wins. */
export function oneThreadDefaults(vars: Record<string, string> = {}): Record<string, string> {
  return { SUBSCRIBERS_PER_HUB: ONE_THREAD_SUBSCRIBERS_PER_HUB, ...vars };
}
