/**
 * @module
 * Where a request came in, as the Durable Object location hint of the region around it: a hot
 * key's replica hubs are made near their subscribers (DESIGN.md, "Hot keys"). From Cloudflare's
 * `request.cf` (its continent and longitude); locally there is none, and no hint.
 */

export type Region = DurableObjectLocationHint;

/** `cf`: a request's `cf` (absent locally), of which this reads the continent and the coordinates. */
export function regionOf(cf: object | undefined): Region | undefined {
  const where: { continent?: unknown; longitude?: unknown; latitude?: unknown } = cf ?? {};
  const longitude = Number(where.longitude);
  const latitude = Number(where.latitude);
  switch (where.continent) {
    case "NA":
      // The Mississippi, roughly: where the platform's two North American regions meet.
      return Number.isFinite(longitude) && longitude < -90 ? "wnam" : "enam";
    case "SA":
      return "sam";
    case "EU":
      return Number.isFinite(longitude) && longitude > 20 ? "eeur" : "weur";
    case "AF":
      return "afr";
    case "OC":
      return "oc";
    case "AS":
      if (Number.isFinite(longitude) && longitude < 60) return "me";
      if (Number.isFinite(latitude) && latitude > 30 && longitude > 100) return "apac-ne";
      if (Number.isFinite(latitude) && latitude < 15) return "apac-se";
      return "apac";
    default:
      return undefined;
  }
}
