/** Auth settings, decided from the Worker's variables (see src/auth/mode.ts and src/http/auth.ts). */
import { describe, expect, it } from "vitest";
import { authMode } from "../../src/auth/mode.ts";
import { deniedResource, originAllowed } from "../../src/http/auth.ts";
import type { Vars } from "../../src/vars.ts";

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
