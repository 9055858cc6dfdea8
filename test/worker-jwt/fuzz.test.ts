import { sign } from "hono/jwt";
import { it } from "vitest";
import { fuzzRelay } from "../worker/fuzz.ts";

it("hostile input (AUTH_MODE=jwt, half with a valid token): never a 5xx, always a Status, nothing created or sent upstream", { timeout: 120_000 }, async () => {
  const valid = await sign(
    { sub: "fuzzer", exp: Math.floor(Date.now() / 1000) + 3600, rules: [{ apiGroups: ["*"], resources: ["*"], namespaces: ["*"] }] },
    "test-secret-that-is-long-enough-for-hs256",
    "HS256",
  );
  let n = 0;
  await fuzzRelay(42, 300, (): Record<string, string> => (n++ % 2 === 0 ? { authorization: `Bearer ${valid}` } : {}));
});
