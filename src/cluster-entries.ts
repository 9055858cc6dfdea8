/**
 * @module
 * `CLUSTERS`, the named clusters a relay reaches: parsed from its JSON text. Import-free, so the
 * deploy check reads it as the Worker does.
 */

/** One entry of `CLUSTERS`: `{"prod": {"url": "...", "tokenSecret": "PROD_TOKEN", "maxHubs": 50}}` or `{"binding": "PROD_VPC"}`. */
export interface ClusterEntry {
  url?: string;
  binding?: string;
  tokenSecret?: string;
  maxHubs?: number;
  subscribersPerHub?: number;
}

/** A Map, so a name from a request (`constructor`) can never find a prototype property. Throws, saying what is wrong, on anything but a JSON object. */
export function parseClusters(text: string | undefined): ReadonlyMap<string, ClusterEntry> {
  if (!text) return new Map();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
    return new Map(Object.entries(parsed as Record<string, ClusterEntry>));
  } catch (e) {
    throw new Error(`CLUSTERS must be a JSON object of {name: {url|binding, tokenSecret?, maxHubs?}}: ${(e as Error).message}`);
  }
}
