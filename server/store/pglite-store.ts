// Embedded PostgreSQL (PGlite). PGlite is one connection: its own `transaction` holds a lock that
// makes concurrent transactions and queries wait their turn, so we always go through it.
import { mkdir } from 'node:fs/promises';
import { PGlite, type Results, type Transaction } from '@electric-sql/pglite';
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

export async function openPgliteStore(dataDir?: string): Promise<Store> {
  if (dataDir && !dataDir.includes('://')) await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  return {
    kind: 'pglite',
    ...queryable(db),
    transaction: (fn) => db.transaction((tx) => fn(queryable(tx))),
    close: () => db.close(),
  };
}
