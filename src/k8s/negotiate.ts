/**
 * @module
 * Accept-header negotiation for the representations the relay and the simulator produce:
 * plain JSON, `Table` (what kubectl's human-readable output asks for), aggregated discovery
 * and, where the caller allows it, YAML (`application/yaml`, the API server's YAML serializer).
 * Media ranges are tried in the order the client listed them; protobuf and CBOR are skipped, so
 * `application/vnd.kubernetes.protobuf, application/json` (what kube components send) gets JSON
 * and an Accept naming only those gets 406, as from an API server without those serializers
 * (apimachinery `pkg/runtime/negotiate.go`).
 */
import { failure } from "./status.ts";
import type { Status } from "./types.ts";

export type Representation = { kind: "json" } | { kind: "table"; version: "v1" | "v1beta1"; contentType: string } | { kind: "aggregated" } | { kind: "yaml" };

interface MediaRange {
  type: string;
  params: Map<string, string>;
}

function parseAccept(header: string): MediaRange[] {
  return header
    .split(",")
    .map((part) => {
      const [type = "", ...rest] = part.split(";").map((s) => s.trim());
      const params = new Map<string, string>();
      for (const p of rest) {
        const eq = p.indexOf("=");
        if (eq > 0)
          params.set(
            p.slice(0, eq).trim().toLowerCase(),
            p
              .slice(eq + 1)
              .trim()
              .replace(/^"|"$/g, ""),
          );
      }
      return { type: type.toLowerCase(), params };
    })
    .filter((r) => r.type !== "" && r.params.get("q") !== "0");
}

/** The representation to send, or `undefined` when nothing acceptable can be produced (406). */
export function negotiate(accept: string | undefined, allow: { table: boolean; aggregated: boolean; yaml?: boolean }): Representation | undefined {
  if (!accept || accept.trim() === "") return { kind: "json" };
  for (const range of parseAccept(accept)) {
    if (range.type === "*/*" || range.type === "application/*") return { kind: "json" };
    // A YAML Table or other conversion is not served: the range is skipped, as one the server cannot produce.
    if (allow.yaml && range.type === "application/yaml" && !range.params.has("as")) return { kind: "yaml" };
    if (range.type !== "application/json") continue;
    const as = range.params.get("as");
    if (as === undefined) return { kind: "json" };
    const g = range.params.get("g");
    const v = range.params.get("v");
    if (allow.table && as === "Table" && g === "meta.k8s.io" && (v === "v1" || v === "v1beta1")) {
      return { kind: "table", version: v, contentType: `application/json;as=Table;v=${v};g=meta.k8s.io` };
    }
    if (allow.aggregated && as === "APIGroupDiscoveryList" && g === "apidiscovery.k8s.io" && v === "v2") return { kind: "aggregated" };
  }
  return undefined;
}

/** The media type of aggregated discovery; the response Content-Type echoes it. */
export const AGGREGATED_DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/** The media type of YAML, the request's and the response's. */
export const YAML = "application/yaml";

/** Nothing the client accepts can be produced (apiserver `errNotAcceptable`, no details): what can be. */
export const notAcceptable = (accepted: readonly string[] = ["application/json"]): Status => failure(406, "NotAcceptable", `only the following media types are accepted: ${accepted.join(", ")}`);
