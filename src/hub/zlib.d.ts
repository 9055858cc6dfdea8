/**
 * What the Worker's code uses of workerd's `node:zlib` (the `nodejs_compat` flag): the hub's
 * compression, and the Workers tests' reading of it. The Workers types do not declare Node's
 * modules, and Node's own types would declare all of Node.
 */
declare module "node:zlib" {
  export function gzipSync(data: Uint8Array, options?: { level?: number }): Uint8Array;
  export function gunzipSync(data: Uint8Array): Uint8Array;
}
