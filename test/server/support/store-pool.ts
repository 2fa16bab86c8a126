// In-memory PGlite stores of the suites, reused within a test worker process. Opening one costs
// ~0.6 s of CPU (a thread, PGlite's start from the run's migrated cluster, its first queries), and
// most suites open one or two: a store a suite closes is emptied back to what a new one holds
// (every row gone, the migrations' record kept, sequences restarted, the session's settings reset)
// and handed to the next suite of the same process that opens one, instead of being closed.
//
// What the suite gets is indistinguishable from a new store where it looks: no row, the same
// schema, a new signing key and demo seller when its server starts. A store whose schema a suite
// changed (a table of its own, a migration test), whose thread died, that fails to empty or whose
// transactions outlive its close is closed for good instead. Only stores opened with no option that
// makes them different (a data directory, a key, a callback) are reused; their key for secrets at
// rest is the one they were opened with, a random one of this process, as any in-memory store's.
import type { Queryable, Store, StoreTopic } from '../../../server/store/store.ts';
import type { StoreOptions } from '../../../server/store/open-store.ts';

/** Idle stores kept per process at most (a suite that had more open at once closes the rest). */
const MAX_IDLE = 2;
/** How long a close waits for the suite's transactions in flight before closing the store for good. */
const CLOSE_WAIT_MS = 5_000;

const idle: Store[] = [];
/** The schema each store was handed out with: it must have it still to be handed out again. */
const schemas = new WeakMap<Store, string>();

/**
 * Whether each option makes a store unlike a reused one: every one does, and a new option of
 * StoreOptions must be decided here (the type requires it).
 */
const SETS_A_STORE_APART: Record<keyof StoreOptions, true> = {
  databaseUrl: true,
  dataDir: true,
  encryptionKey: true,
  previousEncryptionKey: true,
  onPreviousKeyUsed: true,
  pgliteSnapshot: true,
  onFailure: true,
  onMaintenance: true,
  onMadePrivate: true,
  onWaitingForLock: true,
  onOtherInstancesListening: true,
  onReachChange: true,
};

/** Options under which a new store is the same as a reused one: in memory, the default key, no callback. */
export function reusable(options: StoreOptions): boolean {
  return Object.entries(options).every(([name, value]) => value === undefined || !(name in SETS_A_STORE_APART));
}

/** A reusable store: an idle one when there is one, else `open()`'s; closing it gives it back. */
export async function reusedStore(open: () => Promise<Store>): Promise<Store> {
  let store = idle.pop();
  if (!store) {
    store = await open();
    schemas.set(store, await schemaFingerprint(store));
  }
  return lease(store, schemas.get(store)!);
}

/**
 * The store as one suite sees it: from its close() on, its calls refuse as a closed store's do, its
 * transactions still running fail their next statement (and roll back), and what it announced or
 * listened to goes no further.
 */
function lease(store: Store, fingerprint: string): Store {
  let closing: Promise<void> | undefined;
  const stops = new Set<() => void>();
  const running = new Set<Promise<unknown>>();
  const closed = () => Promise.reject(new Error('The store is closed'));
  const gated = (db: Queryable): Queryable => ({
    ...db,
    query: (sql, params) => (closing ? closed() : db.query(sql, params)),
    exec: (sql) => (closing ? closed() : db.exec(sql)),
    announce: (topic) => void (closing || db.announce?.(topic)),
  });
  const { abort } = store as Store & { abort?: (error: Error) => void };
  return {
    ...store,
    ...gated(store),
    transaction(fn) {
      if (closing) return closed();
      const run = store.transaction((tx) => fn(gated(tx)));
      running.add(run);
      void run.catch(() => {}).finally(() => running.delete(run));
      return run;
    },
    onAnnounced(topic: StoreTopic, listener: () => void) {
      if (closing) return () => {};
      const stop = store.onAnnounced!(topic, listener);
      stops.add(stop);
      return () => {
        stops.delete(stop);
        stop();
      };
    },
    ...(abort && { abort: (error: Error) => void (closing || abort(error)) }),
    close() {
      closing ??= (async () => {
        for (const stop of stops) stop(); // the suite's listeners go with it
        const settled = Promise.allSettled(running).then(() => true);
        const done = await Promise.race([settled, new Promise<false>((resolve) => setTimeout(resolve, CLOSE_WAIT_MS, false).unref())]);
        // Room is checked again once emptied: stores closed at once must not all stay.
        if (done && idle.length < MAX_IDLE && (await emptied(store, fingerprint)) && idle.length < MAX_IDLE) idle.push(store);
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
 * then the sequences restart from their own start.
 */
const EMPTY = `
  SET LOCAL session_replication_role = replica;
  DO $$
  DECLARE t text;
  DECLARE first bigint;
  BEGIN
    FOR t IN SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' LOOP
      EXECUTE 'DELETE FROM ' || t;
    END LOOP;
    FOR t, first IN SELECT quote_ident(sequencename), start_value FROM pg_sequences WHERE schemaname = current_schema() LOOP
      PERFORM setval(t, first, false);
    END LOOP;
  END $$;
`;

/**
 * What a suite could change besides rows: tables, columns, constraints, indexes, triggers (and
 * whether they fire), functions, sequences, types, policies, schemas, per-database and per-role
 * settings, and the migrations' record.
 */
async function schemaFingerprint(store: Store): Promise<string> {
  const { rows } = await store.query<{ fingerprint: string }>(`
    SELECT md5(string_agg(item, E'\\n' ORDER BY item)) AS fingerprint FROM (
      SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull
             || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') AS item
        FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
       WHERE c.relnamespace = current_schema()::regnamespace
      UNION ALL SELECT 'relation ' || relname || ' ' || relkind::text || ' ' || relrowsecurity FROM pg_class WHERE relnamespace = current_schema()::regnamespace
      UNION ALL SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
      UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
      UNION ALL SELECT 'trigger ' || pg_get_triggerdef(oid) || ' ' || tgenabled::text FROM pg_trigger WHERE NOT tgisinternal
      UNION ALL SELECT 'function ' || p.oid::regprocedure || ' ' || md5(p.prosrc) FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace
      UNION ALL SELECT 'sequence ' || sequencename || ' ' || data_type::text || ' ' || start_value || ' ' || increment_by || ' ' || min_value || ' ' || max_value || ' ' || cycle
        FROM pg_sequences WHERE schemaname = current_schema()
      UNION ALL SELECT 'type ' || t.typname || ' ' || coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid), '')
        FROM pg_type t WHERE t.typnamespace = current_schema()::regnamespace
      UNION ALL SELECT 'policy ' || tablename || ' ' || policyname || ' ' || coalesce(qual, '') || ' ' || coalesce(with_check, '') FROM pg_policies
      UNION ALL SELECT 'schema ' || nspname FROM pg_namespace
      UNION ALL SELECT 'setting ' || setdatabase || ' ' || setrole || ' ' || array_to_string(setconfig, ',') FROM pg_db_role_setting
      UNION ALL SELECT 'migrations ' || string_agg(version::text, ',' ORDER BY version) FROM schema_migrations
    ) items`);
  return rows[0]!.fingerprint;
}
