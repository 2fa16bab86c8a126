// A Store over a PGlite on the current thread: what the build's snapshot writer
// (pglite-snapshot-writer.ts) migrates with. The server's PGlite runs on a worker thread
// (pglite-worker-store.ts). PGlite is one connection: its own `transaction` holds a lock that makes
// concurrent transactions and queries wait their turn, so we always go through it.
import type { PGlite, Results, Transaction } from '@electric-sql/pglite';
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
