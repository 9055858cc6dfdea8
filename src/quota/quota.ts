/**
 * @module
 * A quota counter: the Quota Durable Object, one per thing being limited (the active hubs of a
 * cluster, the subscriptions of a subject). Holders (hubs) claim a count; the total over
 * unexpired claims may not exceed the limit. Claims are leases that hubs renew from their
 * heartbeat, so a hub that crashes without releasing gives its share back when the lease runs
 * out instead of holding it forever.
 */
import { DurableObject } from "cloudflare:workers";
import type { Vars } from "../vars.ts";

export interface Claim {
  granted: boolean;
  /** The total after this claim (or, refused, the total it would have exceeded). */
  total: number;
  /** Refused: when a share is likely to free up (the soonest lease expiry). */
  retryAfterSeconds: number;
}

export class Quota extends DurableObject<Vars> {
  constructor(ctx: DurableObjectState, env: Vars) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS claims (holder TEXT PRIMARY KEY, count INTEGER NOT NULL, expires INTEGER NOT NULL)");
  }

  /**
   * Set `holder`'s count to `count` for `ttlMs`. Lowering a count (or renewing it unchanged) is
   * always granted; raising it is granted only if the total stays within `max`.
   */
  claim(holder: string, count: number, max: number, ttlMs: number): Claim {
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    sql.exec("DELETE FROM claims WHERE expires <= ?", now);
    const held = sql.exec<{ count: number }>("SELECT count FROM claims WHERE holder = ?", holder).toArray()[0]?.count ?? 0;
    const others = sql.exec<{ total: number | null }>("SELECT SUM(count) AS total FROM claims WHERE holder != ?", holder).one().total ?? 0;
    if (count > held && others + count > max) {
      const soonest = sql.exec<{ soonest: number | null }>("SELECT MIN(expires) AS soonest FROM claims").one().soonest ?? now + ttlMs;
      return { granted: false, total: others + held, retryAfterSeconds: Math.max(1, Math.ceil((soonest - now) / 1000)) };
    }
    if (count === 0) sql.exec("DELETE FROM claims WHERE holder = ?", holder);
    else sql.exec("INSERT OR REPLACE INTO claims (holder, count, expires) VALUES (?, ?, ?)", holder, count, now + ttlMs);
    return { granted: true, total: others + count, retryAfterSeconds: 0 };
  }
}
