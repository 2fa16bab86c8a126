// Embedded PostgreSQL (PGlite). PGlite is one connection: its own `transaction` holds a lock that
// makes concurrent transactions and queries wait their turn, so we always go through it.
import { mkdir } from 'node:fs/promises';
import { PGlite, type Results, type Transaction } from '@electric-sql/pglite';
import { pgliteSnapshot } from './pglite-snapshot.ts';
import { rethrowWithoutValues, type QueryResult, type Queryable, type Store } from './store.ts';

function result<T>(r: Results<T>): QueryResult<T> {
  return { rows: r.rows, rowCount: r.rowCount ?? r.affectedRows ?? r.rows.length };
}

function queryable(db: PGlite | Transaction): Queryable {
  return {
    query: async <T>(sql: string, params: unknown[] = []) => result(await db.query<T>(sql, params).catch(rethrowWithoutValues)),
    exec: async (sql: string) => {
      await db.exec(sql).catch(rethrowWithoutValues);
    },
  };
}

/** A Store over an open PGlite. */
export function pgliteStore(db: PGlite): Store {
  return {
    kind: 'pglite',
    ...queryable(db),
    transaction: (fn) => db.transaction((tx) => fn(queryable(tx))),
    close: () => db.close(),
  };
}

/**
 * A data directory on disk, or memory (no `dataDir`, or `memory://`). With `snapshot` (true: the
 * package's, or a file), a store in memory starts from a pre-initialized, migrated data directory
 * when there is a usable one (pglite-snapshot.ts), else from initdb as always.
 */
export async function openPgliteStore(dataDir?: string, options: { snapshot?: boolean | string } = {}): Promise<Store> {
  if (dataDir && !dataDir.includes('://')) await mkdir(dataDir, { recursive: true });
  const inMemory = !dataDir || dataDir.startsWith('memory://');
  const file = typeof options.snapshot === 'string' ? options.snapshot : undefined;
  const loadDataDir = inMemory && options.snapshot ? await pgliteSnapshot(file) : undefined;
  const db = loadDataDir
    ? await PGlite.create({ dataDir, loadDataDir }).catch(() => PGlite.create(dataDir)) // a snapshot that does not load: initdb
    : await PGlite.create(dataDir);
  return pgliteStore(db);
}
