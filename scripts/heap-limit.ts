/**
 * @module
 * The heap a Durable Object's isolate has deployed (Cloudflare's Durable Objects limits), held
 * to locally too: workerd on a developer's machine enforces no limit unless V8 is given one, so
 * a relay that outgrows the platform's would otherwise fail only once deployed. `npm start`, the
 * benchmark (scripts/runtime.ts) and the tests (vitest.config.ts) run workerd with it;
 * `MINIFLARE_WORKERD_V8_FLAGS`, from which Miniflare passes V8 flags to workerd, replaces it.
 */
export const HEAP_LIMIT_MB = 128;

/** Give the next workerd Miniflare starts the platform's heap, unless the environment says otherwise. */
export function holdToPlatformHeap(): void {
  process.env.MINIFLARE_WORKERD_V8_FLAGS ??= `--max-old-space-size=${HEAP_LIMIT_MB}`;
}

/** Whether a line of the runtime's output says its isolate ran out of heap (V8's fatal error). */
export const outOfMemory = (line: string): boolean => /Reached heap limit|JavaScript heap out of memory/i.test(line);
