import { describe, expect, it } from "vitest";
import { acceptsGzip } from "./accept-encoding.ts";

describe("acceptsGzip", () => {
  it("takes gzip as Go's transport, undici and browsers send it", () => {
    expect(acceptsGzip("gzip")).toBe(true);
    expect(acceptsGzip("gzip, deflate")).toBe(true);
    expect(acceptsGzip("gzip, deflate, br, zstd")).toBe(true);
    expect(acceptsGzip("br;q=1.0, gzip;q=0.8, *;q=0.1")).toBe(true);
    expect(acceptsGzip("x-gzip")).toBe(true);
    expect(acceptsGzip("GZIP;Q=0.5")).toBe(true);
  });

  it("refuses gzip at weight 0, and without a header or with only other codings", () => {
    expect(acceptsGzip("gzip;q=0")).toBe(false);
    expect(acceptsGzip("gzip;q=0.000, deflate")).toBe(false);
    expect(acceptsGzip("identity")).toBe(false);
    expect(acceptsGzip("br, deflate")).toBe(false);
    expect(acceptsGzip("")).toBe(false);
    expect(acceptsGzip(null)).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });

  it("reads * for gzip only when gzip is not named", () => {
    expect(acceptsGzip("*")).toBe(true);
    expect(acceptsGzip("identity, *;q=0.5")).toBe(true);
    expect(acceptsGzip("*;q=0")).toBe(false);
    expect(acceptsGzip("gzip;q=0, *")).toBe(false);
  });

  it("refuses a coding whose weight is not one", () => {
    expect(acceptsGzip("gzip;q=2")).toBe(false);
    expect(acceptsGzip("gzip;q=abc")).toBe(false);
    expect(acceptsGzip("gzip;q=0.0001")).toBe(false);
    expect(acceptsGzip("gzip;level=9")).toBe(true);
  });
});
