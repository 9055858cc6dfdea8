/**
 * What every AUTH_MODE's project checks of the health endpoints: they answer without a token,
 * while the API behind them keeps its gate.
 */
import { expect, it } from "vitest";
import { relay } from "./helpers.ts";

export function healthEndpointsNeedNoToken(apiStatusWithoutToken: number): void {
  it("/healthz and /readyz answer ok without a token; the API keeps its gate", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const response = await relay(path);
      expect([path, response.status, await response.text()]).toEqual([path, 200, "ok\n"]);
      expect((await relay(path, { method: "HEAD" })).status).toBe(200);
    }
    const api = await relay("/api/v1/namespaces/default/pods");
    await api.body?.cancel();
    expect(api.status).toBe(apiStatusWithoutToken);
  });
}
