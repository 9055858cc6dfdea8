/**
 * @module
 * The `/_sim/` control API: JSON in and out, never authenticated, never logged. It is a thin
 * HTTP face over `SimState` (stats, request log, churn, config, faults, reset, users); `restart`
 * answers first and then has the server drop and re-open its listener.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { badRequest, failure, internalError, methodNotAllowed } from "../k8s/status.ts";
import type { ChurnOptions } from "./churn.ts";
import { ApiError } from "./errors.ts";
import { parseFaults } from "./faults.ts";
import { readBody, readJson, sendJson, sendStatus } from "./http.ts";
import { isJsonObject } from "./meta.ts";
import type { SimConfig, SimState } from "./state.ts";

export const CONTROL_PREFIX = "/_sim/";

const ROUTES = ["GET /_sim/stats", "GET /_sim/requests?since=&path=", "POST /_sim/churn", "POST /_sim/config", "POST /_sim/faults", "POST /_sim/reset", "GET /_sim/users", "PUT /_sim/users"];

function integerParam(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null || value === "") return undefined;
  if (!/^[0-9]+$/.test(value)) throw new ApiError(badRequest(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`));
  return Number(value);
}

async function readObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const body = await readJson(req);
  if (!isJsonObject(body)) throw new ApiError(badRequest("the body must be a JSON object"));
  return body;
}

/** `restart` is the server's: it is called after the response has been flushed. */
export async function handleControl(state: SimState, restart: (downtimeMs: number) => void, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const route = `${req.method ?? "GET"} ${url.pathname}`;
  try {
    switch (route) {
      case "GET /_sim/stats":
        return sendJson(res, 200, state.stats());
      case "GET /_sim/requests":
        return sendJson(res, 200, state.log.page(integerParam(url.searchParams, "since"), url.searchParams.get("path") ?? ""));
      case "POST /_sim/churn": {
        const body = await readObject(req);
        if (typeof body.ratePerSec !== "number") throw new ApiError(badRequest('churn needs {"ratePerSec": <number>, "namespaces"?: [...], "events"?: <boolean>}'));
        if (body.namespaces !== undefined && (!Array.isArray(body.namespaces) || body.namespaces.some((n) => typeof n !== "string"))) {
          throw new ApiError(badRequest("churn namespaces must be a list of strings"));
        }
        if (body.events !== undefined && typeof body.events !== "boolean") throw new ApiError(badRequest("churn events must be a boolean"));
        state.setChurn(body as unknown as ChurnOptions);
        return sendJson(res, 200, state.churn.settings);
      }
      case "POST /_sim/config":
        state.configure((await readObject(req)) as Partial<SimConfig>);
        return sendJson(res, 200, state.config);
      case "POST /_sim/faults": {
        const request = parseFaults(await readJson(req));
        state.applyFaults(request);
        const downtime = request.restart?.downtimeMs;
        if (downtime !== undefined) {
          res.setHeader("Connection", "close");
          res.once("finish", () => restart(downtime));
        }
        return sendJson(res, 200, { applied: Object.keys(request) });
      }
      case "POST /_sim/reset":
        state.reset(parseReset(await readBody(req)));
        return sendJson(res, 200, state.stats());
      case "GET /_sim/users":
        return sendJson(res, 200, state.users.list());
      case "PUT /_sim/users":
        state.users.set(await readJson(req));
        return sendJson(res, 200, state.users.list());
      default:
        if (ROUTES.some((r) => r.split(" ")[1]?.split("?")[0] === url.pathname)) throw new ApiError(methodNotAllowed());
        throw new ApiError(failure(404, "NotFound", `no simulator control endpoint ${route}; endpoints: ${ROUTES.join(", ")}`, {}));
    }
  } catch (e) {
    if (e instanceof ApiError) return sendStatus(res, e.status);
    console.error(`simulator: ${route} failed:`, e);
    sendStatus(res, internalError(String(e)));
  }
}

/**
 * A reset's body: empty, or `{"resourceVersion": "N"}` for revisions that start after `N`
 * instead of after the current one; an older `N` is an etcd restored from an older backup.
 */
function parseReset(body: string): number | undefined {
  if (body.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (e) {
    throw new ApiError(badRequest(`the request body is not valid JSON: ${(e as Error).message}`));
  }
  const rv = isJsonObject(parsed) ? parsed.resourceVersion : undefined;
  if (typeof rv !== "string" || !/^[0-9]+$/.test(rv)) throw new ApiError(badRequest('invalid reset request: the body is empty or {"resourceVersion": "<digits>"}'));
  return Number(rv);
}
