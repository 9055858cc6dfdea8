/** Host names the relay answers to, decided from AUTH_MODE and ALLOWED_HOSTS (see src/http/hosts.ts). */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.ts";
import type { Env } from "../../src/env.ts";
import { hostRefusal } from "../../src/http/hosts.ts";

const env = (ALLOWED_HOSTS?: string) => ({ ALLOWED_HOSTS }) as unknown as Env;
const answers = (e: Env, url: string, mode: "none" | "jwt" | "kube" = "none") => hostRefusal(e, mode, new URL(url)) === undefined;

describe("host names the relay answers to (DNS rebinding)", () => {
  it.each(["http://localhost:8787/api", "http://127.0.0.1:1/api", "http://[::1]:8787/api", "http://LOCALHOST/api", "http://[0:0::1]/api"])(
    "AUTH_MODE=none answers loopback names on any port: %s",
    (url) => expect(answers(env(), url)).toBe(true),
  );

  it.each(["http://attacker.example:8787/api", "http://127.0.0.2/api", "http://localhost.attacker.example/api", "http://relay.test/api", "http://10.0.0.1/api"])(
    "AUTH_MODE=none refuses any other name: %s",
    (url) => expect(answers(env(), url)).toBe(false),
  );

  it("says why, naming the setting", () => {
    expect(hostRefusal(env(), "none", new URL("http://attacker.example:8787/api/v1/pods"))).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'the relay does not answer to host "attacker.example": with AUTH_MODE=none the relay answers only localhost, 127.0.0.1, [::1], against DNS rebinding (ALLOWED_HOSTS sets the names it answers to)',
      reason: "Forbidden",
      details: {},
      code: 403,
    });
    expect(hostRefusal(env("relay.lan"), "jwt", new URL("http://evil.example/"))?.message).toBe('the relay does not answer to host "evil.example": it is not in ALLOWED_HOSTS');
  });

  it("ALLOWED_HOSTS replaces the loopback names: names, *.suffix, IP literals, or *", () => {
    const e = env("relay.lan, *.relay.example, [::1], 192.168.1.10");
    expect(answers(e, "http://relay.lan:8787/")).toBe(true);
    expect(answers(e, "http://a.b.relay.example/")).toBe(true);
    expect(answers(e, "http://relay.example/")).toBe(false);
    expect(answers(e, "http://[::1]:9/")).toBe(true);
    expect(answers(e, "http://192.168.1.10/")).toBe(true);
    expect(answers(e, "http://localhost/")).toBe(false);
    expect(answers(env("*"), "http://anything.example/")).toBe(true);
  });

  it("jwt and kube modes answer any name unless ALLOWED_HOSTS is set", () => {
    expect(answers(env(), "https://relay.example.com/", "jwt")).toBe(true);
    expect(answers(env(), "https://relay.example.com/", "kube")).toBe(true);
    expect(answers(env("relay.example.com"), "https://other.example.com/", "kube")).toBe(false);
  });

  it.each(["relay.lan:8787", "http://relay.lan", "relay.lan/x", "a..b", "*relay.lan"])("a malformed entry is a configuration error: %s", (entry) => {
    expect(() => hostRefusal(env(`localhost, ${entry}`), "none", new URL("http://localhost/"))).toThrow(ConfigError);
  });
});
