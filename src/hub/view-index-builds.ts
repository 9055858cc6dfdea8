/**
 * @module
 * The quota on indexes built for live views' orders (DESIGN.md, "Live views"): a build writes a
 * row per object of the collection (rows written are billed: 50,000 a build at 50,000 pods) and
 * takes the place of the least recently used index no open view reads through, so a client that
 * asks for order after order would otherwise bill the relay without bound and evict other
 * subjects' indexes at will. Each subject may have so many built in an hour across the relay,
 * and each hub so many in an hour whoever asks; a build is a claim of one, for an hour, in a
 * Quota object (one per subject, one per hub), so what was built in the last hour counts
 * however the hubs were restarted meanwhile.
 */
import { tooManyRequests } from "../k8s/status.ts";
import type { Status } from "../k8s/types.ts";
import type { Log } from "../log.ts";
import type { QuotaName } from "../metrics/catalog.ts";
import type { Quota } from "../quota/quota.ts";
import { MAX_VIEW_INDEXES } from "./view-rows.ts";

/** How long a build counts against its quotas. */
export const BUILD_PERIOD_MS = 60 * 60 * 1000;
/** When to ask again for a view no index can be made for (every one is read through by an open view): about a view's life on a dashboard. */
const FULL_RETRY_SECONDS = 60;

export interface IndexBuildLimits {
  perSubject: number;
  perHub: number;
}

export class ViewIndexBuilds {
  readonly #quotas: DurableObjectNamespace<Quota>;
  readonly #hub: string;
  readonly #limits: IndexBuildLimits;
  readonly #log: Log;
  readonly #refused: (quota: QuotaName) => void;

  /** `refused`: told of each refusal, by quota (metrics). */
  constructor(quotas: DurableObjectNamespace<Quota>, hub: string, limits: IndexBuildLimits, log: Log, refused: (quota: QuotaName) => void) {
    this.#quotas = quotas;
    this.#hub = hub;
    this.#limits = limits;
    this.#log = log;
    this.#refused = refused;
  }

  /** Before the hub builds an index for a view of `subject` (absent without auth): `undefined`, or the 429 that says whose quota is spent. */
  async admit(subject: string | undefined): Promise<Status | undefined> {
    // One claim per build, each its own holder, so each counts for the hour after it.
    const holder = `${this.#hub} ${crypto.randomUUID()}`;
    const own = subject === undefined ? undefined : { subject, quota: this.#quotas.getByName(`view-index-builds:${subject}`) };
    if (own) {
      const claim = await own.quota.claim(holder, 1, this.#limits.perSubject, BUILD_PERIOD_MS);
      if (!claim.granted) {
        this.#log("view refused: the subject's index builds are spent", { subject, maxPerSubject: this.#limits.perSubject });
        this.#refused("max_view_index_builds_per_subject");
        return tooManyRequests(
          `"${own.subject}" had ${claim.total} indexes built for views' orders in the last hour (MAX_VIEW_INDEX_BUILDS_PER_SUBJECT is ${this.#limits.perSubject}; each writes a row per object): sort by an order a view already uses, or try again later`,
          claim.retryAfterSeconds,
        );
      }
    }
    const here = await this.#quotas.getByName(`view-index-builds-hub:${this.#hub}`).claim(holder, 1, this.#limits.perHub, BUILD_PERIOD_MS);
    if (here.granted) return undefined;
    // Not built: the subject's share goes back.
    if (own) void own.quota.claim(holder, 0, this.#limits.perSubject, BUILD_PERIOD_MS).catch(() => undefined);
    this.#log("view refused: the hub's index builds are spent", { maxPerHub: this.#limits.perHub });
    this.#refused("max_view_index_builds_per_hub");
    return tooManyRequests(
      `this collection's hub had ${here.total} indexes built for views' orders in the last hour (MAX_VIEW_INDEX_BUILDS_PER_HUB is ${this.#limits.perHub}; each writes a row per object): sort by an order a view already uses, or try again later`,
      here.retryAfterSeconds,
    );
  }

  /** The 429 for a view whose order needs an index while open views read through every one the hub keeps. */
  full(): Status {
    this.#log("view refused: open views read through every index the hub keeps", { max: MAX_VIEW_INDEXES });
    this.#refused("max_view_indexes");
    return tooManyRequests(
      `open views of this collection read through all ${MAX_VIEW_INDEXES} indexes of orders its hub keeps, and this order has none: sort by one of their orders, or try again once one of those views has closed`,
      FULL_RETRY_SECONDS,
    );
  }
}
