// The stores every server suite runs on: in-memory PGlite always, and a PostgreSQL server when
// DATABASE_URL is set, each store on a schema of its own (dropped after the test file), so suites
// running at once never see each other's rows. In-memory PGlite stores start from the run's
// migrated cluster, as an in-memory sandbox starts from the package's (test/support/global-setup.ts),
// or are one a previous suite of the same worker closed, emptied (store-pool.ts); whoever opens one
// still runs the migrations, which find nothing to do.
import { randomUUID } from 'node:crypto';
import { expect, inject } from 'vitest';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listMigrations, migrate } from '../../../server/store/migrate.ts';
import { listenStatementOf } from '../../../server/store/postgres-announcements.ts';
import { type Store } from '../../../server/store/store.ts';
import { openStore, type StoreOptions } from '../../../server/store/open-store.ts';
import { reusable, reusedStore } from './store-pool.ts';

export const DATABASE_URL = process.env.DATABASE_URL;

/** The store kinds under test: PGlite, plus PostgreSQL when DATABASE_URL is set. */
export const STORES: Array<'pglite' | 'postgres'> = DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

/**
 * A store as the server opens it, except that PGlite in memory, or on a data directory with no
 * cluster yet, starts from the run's migrated cluster rather than the package's snapshot (which a
 * clone has only once built); an existing data directory or a DATABASE_URL is opened as given.
 */
export function openTestStore(options: StoreOptions): Promise<Store> {
  const open = () => openStore({ pgliteSnapshot: inject('pgliteMigratedSnapshot'), ...options });
  // In memory with nothing set apart: an emptied store a previous suite of this process closed (store-pool.ts).
  return reusable(options) ? reusedStore(open) : open();
}

/** In-memory PGlite from the run's initdb cluster, no migration applied: for the suites of the migrations themselves. */
export function openUnmigratedPglite(): Promise<Store> {
  return openStore({ pgliteSnapshot: inject('pgliteClusterSnapshot') });
}

const schemas: string[] = [];

/** Drops the schemas made so far; run after each test file (test/support/per-file.ts). */
export async function dropFreshSchemas(): Promise<void> {
  if (!schemas.length) return;
  const admin = await openStore({ databaseUrl: DATABASE_URL });
  for (const schema of schemas.splice(0)) await admin.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
}

/**
 * A new empty schema on the PostgreSQL server, and a way to open stores on it (each another
 * instance); `timeZone` sets the sessions' TimeZone (the server's default otherwise).
 */
export async function freshPostgresSchema(options: { timeZone?: string } = {}): Promise<(more?: Omit<StoreOptions, 'databaseUrl'>) => Promise<Store>> {
  const url = await freshPostgresSchemaUrl(options);
  return (more = {}) => openStore({ ...more, databaseUrl: url });
}

/** The DATABASE_URL of a new empty schema on the PostgreSQL server (dropped after the test file). */
export async function freshPostgresSchemaUrl(options: { timeZone?: string } = {}): Promise<string> {
  const schema = `t_${randomUUID().replace(/-/g, '')}`;
  schemas.push(schema);
  const admin = await openStore({ databaseUrl: DATABASE_URL });
  await admin.exec(`CREATE SCHEMA ${schema}`);
  await admin.close();
  const url = new URL(DATABASE_URL!);
  url.searchParams.set('options', `-c search_path=${schema}${options.timeZone ? ` -c TimeZone=${options.timeZone}` : ''}`);
  return url.toString();
}

/** What the connections listening for the instances on `store`'s schema ran last (postgres-announcements.ts). */
async function listenStatementOfStore(store: Store): Promise<string> {
  const { rows } = await store.query<{ schema: string }>('SELECT current_schema() AS schema');
  return listenStatementOf(rows[0]!.schema);
}

/** The PostgreSQL connections listening for the instances on `store`'s schema. */
export async function listeningInstances(store: Store): Promise<number> {
  return (await store.query(`SELECT 1 FROM pg_stat_activity WHERE query = $1 AND state = 'idle'`, [await listenStatementOfStore(store)])).rowCount;
}

/**
 * On PostgreSQL, `store`'s first listener opens its LISTEN connection, which wakes every topic once
 * it listens (what was published before it was heard by no one): returns once that wake has come,
 * so that a test then counts only what it announces. At once on PGlite (one instance, no wake).
 */
export async function listeningAfterItsWake(store: Store): Promise<void> {
  if (store.kind !== 'postgres') return;
  let woken = false;
  const stop = store.onAnnounced!('signing-keys-rotated', () => void (woken = true));
  try {
    await expect.poll(() => woken, { timeout: 5_000 }).toBe(true);
  } finally {
    stop();
  }
}

/** Ends, from the server's side, the connections listening for the instances on `store`'s schema. */
export async function terminateListeners(store: Store): Promise<void> {
  await store.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1', [await listenStatementOfStore(store)]);
}

/** A store of the given kind on a new database; undefined for PGlite lets the test server open one in memory. */
export async function freshStore(kind: 'pglite' | 'postgres'): Promise<Store | undefined> {
  return kind === 'postgres' ? (await freshPostgresSchema())() : undefined;
}

export interface StoreKind {
  name: string;
  /** A new database, migrated; `again()` opens a second store on it (another instance). */
  fresh(): Promise<{ store: Store; again: () => Promise<Store>; drop: () => Promise<void> }>;
}

/** The same kinds, opened and migrated, for suites that use a store without a server. */
export const STORE_KINDS: StoreKind[] = STORES.map((kind) => ({
  name: kind === 'postgres' ? 'PostgreSQL' : 'PGlite',
  async fresh() {
    const open = kind === 'postgres' ? await freshPostgresSchema() : () => openTestStore({});
    const opened: Store[] = [await open()];
    await migrate(opened[0]!);
    const again = async () => {
      if (kind === 'pglite') return opened[0]!; // PGlite in memory is one process's database
      const store = await open();
      opened.push(store);
      return store;
    };
    return { store: opened[0]!, again, drop: async () => void (await Promise.all(opened.map((s) => s.close()))) };
  },
}));

/**
 * A new store of `kind` migrated up to, not including, migration `version` (a data directory or
 * database of an earlier version), for a test of that migration; `close` also removes the copy of
 * the earlier migrations.
 */
export async function storeBeforeMigration(kind: 'pglite' | 'postgres', version: string): Promise<{ store: Store; close: () => Promise<void> }> {
  const earlier = await mkdtemp(join(tmpdir(), 'migrations-'));
  const store = kind === 'postgres' ? await (await freshPostgresSchema())() : await openUnmigratedPglite();
  for (const m of (await listMigrations()).filter((m) => m.version < version)) await copyFile(m.file, join(earlier, `${m.version}_${m.name}.sql`));
  await migrate(store, earlier);
  return { store, close: async () => (await store.close(), await rm(earlier, { recursive: true, force: true })) };
}
