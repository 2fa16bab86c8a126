// A PostgreSQL server through a `pg` Pool (teams sharing one sandbox, several instances behind a
// load balancer). Each transaction holds one pooled client from BEGIN to COMMIT or ROLLBACK.
import pg from 'pg';
import { postgresAnnouncements, type AnnouncementOptions } from './postgres-announcements.ts';
import { rethrowWithoutValues, type QueryResult, type Queryable, type Store } from './store.ts';

type Client = pg.Pool | pg.PoolClient;

function queryable(client: Client): Queryable {
  return {
    query: async <T>(sql: string, params: unknown[] = []): Promise<QueryResult<T>> => {
      const r = await client.query(sql, params).catch(rethrowWithoutValues);
      return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
    },
    // Without parameters `pg` uses the simple protocol, which accepts several statements.
    exec: async (sql: string) => {
      await client.query(sql).catch(rethrowWithoutValues);
    },
  };
}

/**
 * How long the store waits on a PostgreSQL that does not answer (stopped, partitioned, a failover
 * without a reset): a connection that is not ready within `connectTimeoutMs`, or a query without an
 * answer within `queryTimeoutMs`, fails (the request answers 500 in its area's shape, a stop ends)
 * instead of waiting forever; the connection is then discarded. TCP keep-alive finds a peer gone
 * silent between queries.
 */
export const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;
export const POSTGRES_QUERY_TIMEOUT_MS = 60_000;

export interface PostgresStoreOptions extends AnnouncementOptions {
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
}

/** `options`: how the store hears its other instances (postgres-announcements.ts), and its time limits. */
export async function openPostgresStore(databaseUrl: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const { connectTimeoutMs = POSTGRES_CONNECT_TIMEOUT_MS, queryTimeoutMs = POSTGRES_QUERY_TIMEOUT_MS, ...announcements } = options;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    connectionTimeoutMillis: connectTimeoutMs,
    query_timeout: queryTimeoutMs,
    keepAlive: true,
  });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  // Fails at start, not on the first request; the schema names the channel of the instances on it.
  const { rows } = await pool.query<{ schema: string | null }>('SELECT current_schema() AS schema').catch(async (error: Error) => {
    await pool.end().catch(() => {});
    throw error;
  });
  const otherInstances = postgresAnnouncements(pool, databaseUrl, rows[0]?.schema ?? '', announcements);
  return {
    kind: 'postgres',
    ...queryable(pool),
    otherInstances,
    async transaction(fn) {
      const client = await pool.connect();
      let broken: Error | undefined;
      // The pool listens for a client's errors only while it is idle: one lost between two queries
      // of this transaction (the server restarted, the backend terminated) would be an unhandled
      // 'error' event, which ends the process. Here it marks the client to discard; the next query fails.
      const lost = (error: Error) => (broken ??= error);
      client.on('error', lost);
      try {
        await client.query('BEGIN');
        const value = await fn(queryable(client));
        await client.query('COMMIT');
        return value;
      } catch (error) {
        // A client that cannot even roll back is discarded rather than returned to the pool.
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw error;
      } finally {
        client.off('error', lost);
        client.release(broken);
      }
    },
    close: async () => {
      await otherInstances.close();
      await pool.end();
    },
  };
}
