import { it } from "vitest";
import { fuzzRelay } from "./fuzz.ts";

it("hostile input (AUTH_MODE=none): never a 5xx, always a Status, nothing created or sent upstream", { timeout: 120_000 }, async () => {
  await fuzzRelay(20261122, 400);
});
