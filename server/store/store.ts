// The one storage interface of the reference server: PostgreSQL SQL, spoken either by embedded
// PGlite (a data directory on disk, or memory) or by a PostgreSQL server through `pg`.

export interface QueryResult<T> {
  rows: T[];
  /** Rows returned by a SELECT, or changed by an INSERT, UPDATE or DELETE. */
  rowCount: number;
}

/** Something that runs SQL: the store itself, or the client of one transaction. */
export interface Queryable {
  /** One statement, with `$1`-style parameters. Pass jsonb values as `JSON.stringify(value)`. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** A script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Store extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<R>(fn: (tx: Queryable) => Promise<R>): Promise<R>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** A PostgreSQL connection string; when set, PGlite is not used. */
  databaseUrl?: string;
  /** PGlite data directory; absent means in memory. */
  dataDir?: string;
}

/** PostgreSQL when a URL is given, PGlite otherwise. Imports lazily so each driver loads only when used. */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const { openPostgresStore } = await import('./postgres-store.ts');
    return openPostgresStore(options.databaseUrl);
  }
  const { openPgliteStore } = await import('./pglite-store.ts');
  return openPgliteStore(options.dataDir);
}
