/**
 * @module
 * YAML made in the Worker on the way out of a hub, as the API server's YAML serializer writes
 * it (`k8s/yaml.ts`): a list an item at a time as its items arrive, one object whole, and a
 * Status too, since the API server writes its errors in the representation the client asked
 * for. The hub keeps serialising once, in JSON, for everyone.
 */
import { ListItems } from "../k8s/list-items.ts";
import { YAML } from "../k8s/negotiate.ts";
import { jsonToYaml, YamlList } from "../k8s/yaml.ts";
import type { ResourceVerb } from "./resource-resolver.ts";

/** The YAML form of a hub's answer to a get or list. */
export async function yamlResponse(response: Response, verb: Exclude<ResourceVerb, "watch">): Promise<Response> {
  if (response.status !== 200 || !response.body) return yamlStatus(response);
  const headers = yamlHeaders(response);
  if (verb === "list") return new Response(response.body.pipeThrough(new TextDecoderStream()).pipeThrough(yamlItems()), { status: 200, headers });
  return new Response(jsonToYaml(await response.text()), { status: 200, headers });
}

/** An error (a JSON Status, whoever wrote it) in YAML; anything else as it is. */
export async function yamlStatus(response: Response): Promise<Response> {
  if (!response.headers.get("content-type")?.startsWith("application/json")) return response;
  return new Response(jsonToYaml(await response.text()), { status: response.status, headers: yamlHeaders(response) });
}

function yamlHeaders(response: Response): Headers {
  const headers = new Headers(response.headers);
  headers.set("content-type", YAML);
  headers.delete("content-length");
  return headers;
}

/**
 * A list in YAML as its JSON arrives: the fields before its items, then each item as it
 * completes, then the rest. A list of any size costs the Worker one item, not the list (an
 * isolate has 128 MB; 200,000 pods are 700 MB of JSON).
 */
export function yamlItems(): TransformStream<string, Uint8Array> {
  const items = new ListItems();
  const yaml = new YamlList();
  const encoder = new TextEncoder();
  let begun = false;
  return new TransformStream({
    transform(chunk, controller) {
      const pieces = items.push(chunk);
      let out = "";
      if (pieces.head) {
        out += yaml.begin(JSON.stringify(pieces.head));
        begun = true;
      }
      for (const item of pieces.items) out += yaml.item(item);
      if (out) controller.enqueue(encoder.encode(out));
    },
    flush(controller) {
      if (!begun || !items.ended) throw new Error("the list ended before its items did");
      controller.enqueue(encoder.encode(yaml.end()));
    },
  });
}
