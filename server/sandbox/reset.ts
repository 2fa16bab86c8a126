// A sandbox back to its fresh state in one transaction: every object any seller made is gone, the
// demo seller (its seller, client and link defaults) and the signing keys are kept, so its
// credentials and the tokens already issued to it keep working. What a test suite calls between
// tests (startSandbox's `reset()`), so it is made cheap: the tables, the order their foreign keys
// allow deleting them in and their sequences are read once per store, and each reset is one script
// of DELETEs (a TRUNCATE gives every table and index new files: ~0.4 s on PGlite for the ~20 tables
// of a sandbox holding a test's few rows, against a few milliseconds for DELETE) and sequence
// restarts, sent in one round trip.
import type { Store } from '../store/store.ts';
import { DEMO_SELLER_ID } from './demo-seller.ts';

/** Tables that outlive a reset: the migrations' record and the signing keys, whole. */
const KEPT = new Set(['schema_migrations', 'signing_keys']);
/** Tables where only the demo seller's rows outlive a reset. */
const DEMO_ROWS = new Set(['business_configurations', 'api_clients', 'sellers']);

const plans = new WeakMap<Store, Promise<string>>();

/** The reset script of this store's schema: referencing tables before the tables they reference. */
async function resetScript(store: Store): Promise<string> {
  const { rows: tables } = await store.query<{ name: string }>(
    'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename',
  );
  const { rows: references } = await store.query<{ child: string; parent: string }>(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = current_schema() AND c.conrelid <> c.confrelid`,
  );
  const { rows: sequences } = await store.query<{ name: string }>(
    `SELECT s.relname AS name FROM pg_class s
       JOIN pg_depend d ON d.objid = s.oid AND d.deptype IN ('a', 'i')
       JOIN pg_class t ON t.oid = d.refobjid
       JOIN pg_namespace n ON n.oid = s.relnamespace
      WHERE s.relkind = 'S' AND n.nspname = current_schema() AND t.relname <> ALL($1)`,
    [[...KEPT]],
  );
  const unquote = (name: string) => name.replace(/^"|"$/g, '');
  const cleared = tables.map((t) => t.name).filter((t) => !KEPT.has(t));
  // Depth-first: a table is deleted from after every table that references it.
  const ordered: string[] = [];
  const visit = (table: string, path: Set<string>) => {
    if (ordered.includes(table) || path.has(table)) return;
    path.add(table);
    for (const ref of references) if (unquote(ref.parent) === table) visit(unquote(ref.child), path);
    path.delete(table);
    ordered.push(table);
  };
  for (const table of cleared) visit(table, new Set());
  const deletes = ordered
    .filter((t) => cleared.includes(t))
    .map((t) => (DEMO_ROWS.has(t) ? `DELETE FROM "${t}" WHERE seller_id <> '${DEMO_SELLER_ID}';` : `DELETE FROM "${t}";`));
  const restarts = sequences.map((s) => `SELECT setval('"${s.name}"', 1, false);`);
  // Every table first, or none (NOWAIT): a reset never waits holding some of them, so it cannot
  // deadlock with a transaction under way (resetSandbox tries again until that one is over).
  const lock = `LOCK TABLE ${ordered.filter((t) => cleared.includes(t)).map((t) => `"${t}"`).join(', ')} IN ACCESS EXCLUSIVE MODE NOWAIT;`;
  // No statement time limit (postgres-store.ts): on a large shared database the deletes may be long.
  return ['SET LOCAL statement_timeout = 0;', lock, ...deletes, ...restarts].join('\n');
}

/** The store's reset script, read once; a failed read is read again by the next call. */
function planOf(store: Store): Promise<string> {
  let script = plans.get(store);
  if (!script) {
    plans.set(store, (script = resetScript(store)));
    script.catch(() => plans.delete(store));
  }
  return script;
}

/**
 * Reads the reset script ahead of the first reset (a `startSandbox` does it while its app is built,
 * when PGlite's thread has nothing else to do): a suite's first reset is then its DELETEs only.
 */
export function prepareReset(store: Store): void {
  void planOf(store).catch(() => undefined); // read again by the first reset if this read failed
}

export async function resetSandbox(store: Store): Promise<void> {
  // A failed read is read again once: the one this reset joined may be the read begun at start.
  const sql = await planOf(store).catch(() => planOf(store));
  // On PostgreSQL a transaction may be under way on other connections (a test clock's advance
  // charging, a payment, a worker's pass): the script's first statement takes every table it
  // clears at once or fails at once (lock_not_available), and the reset is tried again shortly,
  // until that transaction is over; a reset that waited holding some tables would deadlock with
  // one that needs them. PGlite runs one transaction at a time: its first try holds.
  const deadline = Date.now() + RESET_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.transaction((tx) => tx.exec(sql));
    } catch (error) {
      if (Date.now() >= deadline || !RETRIED_CODES.has((error as { code?: string }).code ?? '')) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(2 * attempt, 20)));
    }
  }
}

/** PostgreSQL's lock_not_available, deadlock_detected and serialization_failure: the reset may simply run again. */
const RETRIED_CODES = new Set(['55P03', '40P01', '40001']);
/** How long a reset keeps trying while other transactions hold its tables. */
const RESET_WAIT_MS = 10_000;
