/** Auth and log settings, decided from the Worker's variables (see src/auth/mode.ts, src/http/auth.ts and src/log.ts). */
import { describe, expect, it, vi } from "vitest";
import { authMode } from "../../src/auth/mode.ts";
import { logLevel } from "../../src/config.ts";
import { deniedResource, originAllowed } from "../../src/http/auth.ts";
import type { Vars } from "../../src/vars.ts";
import { relay } from "./helpers.ts";

const env = (vars: Record<string, string>) => vars as Vars;

describe("relay settings", () => {
  it("AUTH_MODE unset or unknown: nothing is served, and the Status says what to configure", () => {
    for (const vars of [{}, { AUTH_MODE: "open" }] as Array<Record<string, string>>) {
      const mode = authMode(env(vars));
      expect(mode.ok).toBe(false);
      if (!mode.ok) {
        expect(mode.status.code).toBe(503);
        expect(mode.status.message).toContain('"jwt" (with AUTH_JWT_SECRET), "kube"');
      }
    }
    const noSecret = authMode(env({ AUTH_MODE: "jwt" }));
    expect(!noSecret.ok && noSecret.status.message).toContain("AUTH_JWT_SECRET");
    expect(authMode(env({ AUTH_MODE: "kube" }))).toEqual({ ok: true, value: "kube" });
  });

  it("DENY_RESOURCES: secrets by default; resource or resource.group", () => {
    expect(deniedResource(env({}), "", "secrets")).toBe(true);
    expect(deniedResource(env({}), "", "pods")).toBe(false);
    const custom = env({ DENY_RESOURCES: "roles.rbac.authorization.k8s.io, configmaps" });
    expect(deniedResource(custom, "rbac.authorization.k8s.io", "roles")).toBe(true);
    expect(deniedResource(custom, "", "configmaps")).toBe(true);
    expect(deniedResource(custom, "", "secrets")).toBe(false);
  });

  it("WebSocket origins: own origin and ALLOWED_ORIGINS only; plain requests are not judged by origin", () => {
    const ws = (origin: string) => new Request("https://relay.example/api/v1/pods?watch=1", { headers: { upgrade: "websocket", origin } });
    const allowed = env({ ALLOWED_ORIGINS: "https://dash.example" });
    expect(originAllowed(allowed, ws("https://dash.example"))).toBe(true);
    expect(originAllowed(allowed, ws("https://relay.example"))).toBe(true);
    expect(originAllowed(allowed, ws("https://evil.example"))).toBe(false);
    expect(originAllowed(allowed, new Request("https://relay.example/api/v1/pods", { headers: { origin: "https://evil.example" } }))).toBe(true);
  });
});

describe("the relay's log lines", () => {
  it("carry their time and level; at the default level a refusal is logged and an access allowed is not", async () => {
    const lines: string[] = [];
    const spies = (["log", "debug", "warn", "error"] as const).map((method) => vi.spyOn(console, method).mockImplementation((line: unknown) => void lines.push(String(line))));
    try {
      expect((await relay("/api/v1/namespaces/default/secrets")).status).toBe(403);
      const pods = await relay("/api/v1/namespaces/default/pods");
      expect(pods.status).toBe(200);
      await pods.body?.cancel();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.map((l) => l.msg)).toContain("access denied");
    expect(logged.map((l) => l.msg)).not.toContain("access allowed");
    for (const line of logged) {
      expect(line.time, JSON.stringify(line)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(["debug", "info", "warn", "error"]).toContain(line.level);
    }
  });

  it("LOG_LEVEL: one of debug, info, warn, error (default info); anything else names the variable", () => {
    expect(logLevel(env({}))).toBe("info");
    expect(logLevel(env({ LOG_LEVEL: "debug" }))).toBe("debug");
    expect(() => logLevel(env({ LOG_LEVEL: "verbose" }))).toThrow('LOG_LEVEL must be one of debug, info, warn, error, got "verbose"');
  });
});

describe("/_relay/access without auth", () => {
  it("everything, cluster-wide, for anyone", async () => {
    const response = await relay("/_relay/access");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      kind: "AccessSummary",
      apiVersion: "relay.kube-watch-relay.dev/v1",
      metadata: {},
      status: { cluster: "default", clusterRules: [{ verbs: ["get", "list", "watch"], apiGroups: ["*"], resources: ["*"] }], namespaces: [], incomplete: false },
    });
  });
});
