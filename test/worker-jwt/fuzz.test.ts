import { it } from "vitest";
import { jwtFor } from "../kit/tokens.ts";
import { fuzzRelay } from "../worker/fuzz.ts";

it("hostile input (AUTH_MODE=jwt, half with a valid token): never a 5xx, always a Status, nothing created or sent upstream", { timeout: 120_000 }, async () => {
  const valid = await jwtFor("fuzzer", [{ apiGroups: ["*"], resources: ["*"], namespaces: ["*"] }], { ttlSeconds: 3600 });
  let n = 0;
  await fuzzRelay(42, 300, (): Record<string, string> => (n++ % 2 === 0 ? { authorization: `Bearer ${valid}` } : {}));
});
