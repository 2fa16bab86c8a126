// In-memory PGlite stores of the suites, reused within a test worker process. Opening one costs
// ~0.6 s of CPU (a thread, PGlite's start from the run's migrated cluster, its first queries), and
// most suites open one or two: a store a suite closes is emptied back to what a new one holds
// (every row gone, the migrations' record kept, sequences restarted, the session's settings reset)
// and handed to the next suite of the same process that opens one, instead of being closed.
//
// What the suite gets is indistinguishable from a new store where it looks: no row, the same
// schema, a new signing key and demo seller when its server starts. A store whose schema a suite
// changed (a table of its own, a migration test), whose thread died or that fails to empty is
// closed for good instead. Only stores opened with no option that makes them different (a data
// directory, a key, a callback) are reused; their key for secrets at rest is the one they were
// opened with, a random one of this process, as any in-memory store's.
import type { Store, StoreTopic } from '../../../server/store/store.ts';
import type { StoreOptions } from '../../../server/store/open-store.ts';

/** Idle stores kept per process at most (a suite that had more open at once closes the rest). */
const MAX_IDLE = 2;

const idle: Store[] = [];
/** The schema each store was handed out with: it must have it still to be handed out again. */
const schemas = new WeakMap<Store, string>();

/** Options under which a new store is the same as a reused one: in memory, the default key, no callback. */
export function reusable(options: StoreOptions): boolean {
  return Object.entries(options).every(([name, value]) => value === undefined || !OPTIONS_THAT_MATTER.has(name));
}

const OPTIONS_THAT_MATTER = new Set<string>([
  'databaseUrl',
  'dataDir',
  'encryptionKey',
  'previousEncryptionKey',
  'onPreviousKeyUsed',
  'pgliteSnapshot',
  'onFailure',
  'onMaintenance',
  'onMadePrivate',
  'onWaitingForLock',
  'onOtherInstancesListening',
] satisfies Array<keyof StoreOptions>);

/** A reusable store: an idle one when there is one, else `open()`'s; closing it gives it back. */
export async function reusedStore(open: () => Promise<Store>): Promise<Store> {
  let store = idle.pop();
  if (!store) {
    store = await open();
    schemas.set(store, await schemaFingerprint(store));
  }
  return lease(store, schemas.get(store)!);
}

/** The store as one suite sees it: calls after its close() refuse, as a closed store's do. */
function lease(store: Store, fingerprint: string): Store {
  let closing: Promise<void> | undefined;
  const stops = new Set<() => void>();
  const closed = () => Promise.reject(new Error('The store is closed'));
  return {
    ...store,
    query: (sql, params) => (closing ? closed() : store.query(sql, params)),
    exec: (sql) => (closing ? closed() : store.exec(sql)),
    transaction: (fn) => (closing ? closed() : store.transaction(fn)),
    onAnnounced(topic: StoreTopic, listener: () => void) {
      const stop = store.onAnnounced!(topic, listener);
      stops.add(stop);
      return () => {
        stops.delete(stop);
        stop();
      };
    },
    close() {
      closing ??= (async () => {
        for (const stop of stops) stop(); // the suite's listeners go with it
        if (idle.length < MAX_IDLE && (await emptied(store, fingerprint))) idle.push(store);
        else await store.close();
      })();
      return closing;
    },
  };
}

/** Empties the store for the next suite; false when it cannot be reused (then closed by the caller). */
async function emptied(store: Store, fingerprint: string): Promise<boolean> {
  try {
    if ((await schemaFingerprint(store)) !== fingerprint) return false;
    await store.transaction((tx) => tx.exec(EMPTY));
    await store.exec('DISCARD ALL');
    return true;
  } catch {
    return false; // its thread died, or a suite left it unusable
  }
}

/**
 * Every row of the schema's tables but the migrations' record, in one transaction: foreign keys
 * are not checked meanwhile (a replica's session does not fire them), so tables go in any order;
 * then the sequences restart.
 */
const EMPTY = `
  SET LOCAL session_replication_role = replica;
  DO $$
  DECLARE t text;
  BEGIN
    FOR t IN SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' LOOP
      EXECUTE 'DELETE FROM ' || t;
    END LOOP;
    FOR t IN SELECT quote_ident(sequencename) FROM pg_sequences WHERE schemaname = current_schema() LOOP
      PERFORM setval(t, 1, false);
    END LOOP;
  END $$;
`;

/** What a suite could change in the schema: tables, columns, constraints, indexes, triggers, functions, sequences. */
async function schemaFingerprint(store: Store): Promise<string> {
  const { rows } = await store.query<{ fingerprint: string }>(`
    SELECT md5(string_agg(item, E'\\n' ORDER BY item)) AS fingerprint FROM (
      SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull
             || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') AS item
        FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
       WHERE c.relnamespace = current_schema()::regnamespace
      UNION ALL SELECT 'relation ' || relname || ' ' || relkind::text FROM pg_class WHERE relnamespace = current_schema()::regnamespace
      UNION ALL SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
      UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
      UNION ALL SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
      UNION ALL SELECT 'function ' || p.oid::regprocedure || ' ' || md5(p.prosrc) FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace
      UNION ALL SELECT 'schema ' || nspname FROM pg_namespace
    ) items`);
  return rows[0]!.fingerprint;
}
