/**
 * A full garbage collection, for unit tests run in Node that check what a part lets go of
 * (files type-checked with the Workers types know no `node:` modules).
 */
const { setFlagsFromString } = (await import("node:v8" as string)) as { setFlagsFromString(flags: string): void };
const { runInNewContext } = (await import("node:vm" as string)) as { runInNewContext(code: string): unknown };

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Collect, once the turn that made the weak references is over (until then they hold). */
export async function collected(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  gc();
}
