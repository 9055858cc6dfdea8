/**
 * @module
 * Test helpers for the simulator: JSON requests and pod manifests (watch streams are read with
 * the kit's `openWatch`).
 */
import type { KubeObject } from "../../src/k8s/types.ts";

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export async function request<T = any>(url: string, init: RequestInit = {}): Promise<JsonResponse<T>> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

export const sendJson = (url: string, method: string, body: unknown, contentType = "application/json") =>
  request(url, { method, headers: { "Content-Type": contentType }, body: JSON.stringify(body) });

/** A minimal pod manifest for writes. */
export function podManifest(namespace: string, name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels },
    spec: { containers: [{ name: "main", image: "busybox:1.36" }] },
  };
}
