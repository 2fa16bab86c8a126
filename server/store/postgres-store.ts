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

/** `announcements`: how the store hears its other instances (postgres-announcements.ts). */
export async function openPostgresStore(databaseUrl: string, announcements: AnnouncementOptions = {}): Promise<Store> {
  const pool = new pg.Pool({ connectionString: databaseUrl });
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
        client.release(broken);
      }
    },
    close: async () => {
      await otherInstances.close();
      await pool.end();
    },
  };
}
