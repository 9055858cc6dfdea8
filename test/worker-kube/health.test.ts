import { describe } from "vitest";
import { healthEndpointsNeedNoToken } from "../worker/health-endpoints.ts";

describe("health endpoints in AUTH_MODE=kube", () => healthEndpointsNeedNoToken(401));
