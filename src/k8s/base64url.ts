/**
 * @module
 * base64url without padding, of UTF-8 text: how the API server's WebSocket bearer subprotocol
 * carries a token, and how continue tokens are written.
 */

export function encodeBase64Url(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The text, or `undefined` when `value` is not base64url of UTF-8. */
export function decodeBase64Url(value: string): string | undefined {
  try {
    const binary = atob(value.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}
