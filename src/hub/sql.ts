/**
 * @module
 * The database as the hub's tables use it: statements. Its own module, below storage
 * (`storage.ts`, which makes the schema from the tables' shapes) and the tables that use it
 * (`collection.ts`, `window.ts`, `tombstones.ts`, `view-rows.ts`, the staged lists), so none
 * of them imports another to name it.
 */

/** The database as the hub's tables use it: statements. */
export type Sql = Pick<SqlStorage, "exec">;
