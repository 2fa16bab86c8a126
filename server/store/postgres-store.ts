// A PostgreSQL server through a `pg` Pool (teams sharing one sandbox, several instances behind a
// load balancer). Each transaction holds one pooled client from BEGIN to COMMIT or ROLLBACK.
import pg from 'pg';
import { postgresAnnouncements, type AnnouncementOptions } from './postgres-announcements.ts';
import { rethrowWithoutValues, StoreUnavailable, type QueryResult, type Queryable, type Store } from './store.ts';

type Client = pg.Pool | pg.PoolClient;
/** Runs one call to the server: what it answers, or the error as the store throws it (see `reach`). */
type Guard = <T>(call: () => Promise<T>) => Promise<T>;

function queryable(client: Client, guarded: Guard): Queryable {
  return {
    query: async <T>(sql: string, params: unknown[] = []): Promise<QueryResult<T>> => {
      const r = await guarded(() => client.query(sql, params));
      return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
    },
    // Without parameters `pg` uses the simple protocol, which accepts several statements.
    exec: async (sql: string) => {
      await guarded(() => client.query(sql));
    },
  };
}

/**
 * Why the server could not be reached or stopped answering, rather than refusing a statement; undefined
 * for any other failure: a network failure (Node's code), `pg`'s own words for a connection lost or not
 * made in time, a query timed out on this side, or PostgreSQL's connection exceptions (class 08) and
 * shutdowns. pg-pool's "timeout exceeded when trying to connect" is not one: it waited for a free
 * client of its own (every connection busy: a lock, a load), not for the server.
 */
/** PostgreSQL's connection exceptions (class 08), admin or crash shutdown, and cannot connect now. */
const OUT_OF_REACH_SQLSTATE = /^08...$|^57P0[123]$/;

function outageReason(error: unknown, limits: { connectTimeoutMs: number; queryTimeoutMs: number }): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code in CONNECTION_FAILURES) return CONNECTION_FAILURES[code];
  if (code === 'EPIPE') return 'the connection was closed';
  if (OUT_OF_REACH_SQLSTATE.test(code)) return error.message;
  if (/^Query read timeout/.test(error.message)) return `no answer within the query timeout (${limits.queryTimeoutMs} ms)`;
  if (/^Connection terminated due to connection timeout/.test(error.message)) return `no answer within the connect timeout (${limits.connectTimeoutMs} ms)`;
  if (/^(Connection terminated|Client has encountered a connection error)/.test(error.message)) return `the connection was lost (${error.message})`;
  return undefined;
}

/**
 * PostgreSQL itself refused (too many connections, a wrong password) or ended a session for a reason of
 * its own (idle in transaction past its limit): it answered. A SQLSTATE (no class begins with E, as
 * Node's network codes do: EPIPE), other than those that say it is out of reach.
 */
function isServersRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-DF-Z][0-9A-Z]{4}$/.test(code) && !OUT_OF_REACH_SQLSTATE.test(code);
}

/** pg-pool's wait for a free client of its own ran out (see outageReason). */
const isPoolWait = (error: unknown) => error instanceof Error && /^timeout exceeded when trying to connect/.test(error.message);

/** An outage of the server, told once (its first failure), and its end (the first call that worked after it). */
export type ReachChange = { reachable: false; error: Error } | { reachable: true; failedCalls: number };

/**
 * Time limits, so that a slow or silent PostgreSQL fails requests instead of holding them:
 * - a statement runs at most `statementTimeoutMs` on the server (`statement_timeout`: PostgreSQL
 *   cancels it, its transaction rolls back and its locks go); migrations and `reset()` lift it
 *   (`SET LOCAL statement_timeout = 0`), being long by nature on a large database;
 * - a server that does not answer at all (stopped, partitioned, a failover without a reset): a
 *   connection not ready within `connectTimeoutMs` fails, which also bounds a request's wait for one
 *   of the pool's 10 connections, and a query without an answer within `queryTimeoutMs` fails on
 *   this side (the connection is discarded; what the server may still do is its own);
 * - TCP keep-alive from 10 s of silence finds a peer gone between queries;
 * - a transaction left idle on the server more than `idleInTransactionTimeoutMs` between two of its
 *   statements (`idle_in_transaction_session_timeout`: PostgreSQL ends that session, its transaction
 *   rolls back and its row locks go) is one whose instance went silent (a partition, a process
 *   frozen or killed without a reset): no transaction here waits on anything but its own statements,
 *   and its locks (a payment link's, a payment intent's) would otherwise stay until the server's TCP
 *   keep-alive gave up on the peer, two hours by default on Linux, every payment of them failing at
 *   the statement timeout meanwhile.
 */
export const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;
export const POSTGRES_STATEMENT_TIMEOUT_MS = 60_000;
export const POSTGRES_QUERY_TIMEOUT_MS = 120_000;
export const POSTGRES_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

export interface PostgresStoreOptions extends AnnouncementOptions {
  onReachChange?: ((change: ReachChange) => void) | undefined;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  queryTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
}

/** Node's words for a connection that failed before PostgreSQL answered, by its code. */
const CONNECTION_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused (is PostgreSQL running there, on that port?)',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name did not resolve (no answer from the name server)',
  ETIMEDOUT: 'no answer',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ECONNRESET: 'the connection was closed',
};

/** The server as log lines and errors name it: the URL's host and port, never its user or password. */
function serverOf(databaseUrl: string): string {
  try {
    const { hostname, port } = new URL(databaseUrl);
    if (hostname) return `at ${hostname}:${port || 5432} (the database URL)`;
  } catch {
    // Not a URL the WHATWG parser reads (pg reads more): named by its role only.
  }
  return 'of the database URL';
}

/**
 * A first connection that failed, saying to which server (the URL's host and port, never its user
 * or password) and why: `connect ECONNREFUSED 127.0.0.1:1` alone did not say it was the database's.
 * PostgreSQL's own refusals (a wrong password, no such database) keep their words.
 */
function unreachable(error: Error, databaseUrl: string, connectTimeoutMs: number): Error {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const reason = CONNECTION_FAILURES[code] ?? (/timeout/i.test(error.message) ? `no answer within the connect timeout (${connectTimeoutMs} ms)` : error.message);
  return Object.assign(new Error(`Cannot connect to the PostgreSQL server ${serverOf(databaseUrl)}: ${reason}`, { cause: error }), code ? { code } : {});
}

/** `options`: how the store hears its other instances (postgres-announcements.ts), and its time limits. */
export async function openPostgresStore(databaseUrl: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const {
    connectTimeoutMs = POSTGRES_CONNECT_TIMEOUT_MS,
    statementTimeoutMs = POSTGRES_STATEMENT_TIMEOUT_MS,
    queryTimeoutMs = POSTGRES_QUERY_TIMEOUT_MS,
    idleInTransactionTimeoutMs = POSTGRES_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    onReachChange,
    ...announcements
  } = options;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: statementTimeoutMs,
    query_timeout: queryTimeoutMs,
    idle_in_transaction_session_timeout: idleInTransactionTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  // Fails at start, not on the first request; the schema names the channel of the instances on it.
  const { rows } = await pool.query<{ schema: string | null }>('SELECT current_schema() AS schema').catch(async (error: Error) => {
    await pool.end().catch(() => {});
    throw unreachable(error, databaseUrl, connectTimeoutMs);
  });
  const otherInstances = postgresAnnouncements(pool, databaseUrl, rows[0]?.schema ?? '', announcements);
  // Calls failed since the server was last reached; undefined while it answers. Calls are numbered
  // as they begin: only one begun after the outage's first failure ends it (one in flight since
  // before may still come back answered), and only one begun after the last outage ended starts
  // another (one stuck since before on a silent connection fails at its query timeout, long after).
  let failedCalls: number | undefined;
  let calls = 0;
  let outageFrom = 0;
  let recoveredAt = 0;
  const where = serverOf(databaseUrl);
  const tell = (change: ReachChange) => {
    try {
      onReachChange?.(change);
    } catch {
      // the caller's own failure: the store goes on
    }
  };
  // One check at a time, shared by the calls that wait for it: a connection of its own, outside the
  // pool. PostgreSQL's own refusal is an answer (too many connections: a limit reached under a lock
  // or a load is the pool's case), but its shutdown is not; an answer is kept for the connect timeout,
  // so that a busy server is not sent a new connection for every call that waited.
  let checking: Promise<boolean> | undefined;
  let answeredAt = -Infinity;
  const serverAnswers = async () => {
    if (Date.now() - answeredAt < connectTimeoutMs) return true;
    const answers = await (checking ??= (async () => {
      const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: connectTimeoutMs, query_timeout: connectTimeoutMs });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('SELECT 1');
        return true;
      } catch (error) {
        return isServersRefusal(error);
      } finally {
        void client.end().catch(() => {});
      }
    })().finally(() => (checking = undefined)));
    if (answers) answeredAt = Date.now();
    return answers;
  };
  const guarded: Guard = async (call) => {
    const number = ++calls;
    let value;
    try {
      value = await call();
    } catch (error) {
      // A wait for a pooled client is the pool's own (every connection busy: a lock, a load), unless
      // an outage is under way or ended since the call began, or the server does not answer a new
      // connection either (each pooled one stuck on a server gone silent, until its query timeout).
      let reason = outageReason(error, { connectTimeoutMs, queryTimeoutMs });
      if (reason === undefined && isPoolWait(error)) {
        if (failedCalls !== undefined || number <= recoveredAt) reason = 'no pooled connection came free while it was out of reach';
        else if (!(await serverAnswers())) reason = `no pooled connection came free within the connect timeout (${connectTimeoutMs} ms), and a new one got no answer either`;
      }
      if (reason === undefined) return rethrowWithoutValues(error);
      const unavailable = new StoreUnavailable(`The PostgreSQL server ${where} cannot be reached: ${reason}`, { cause: error });
      if (number <= recoveredAt) throw unavailable; // begun before the last outage ended: part of that one
      if (failedCalls === undefined) {
        outageFrom = calls;
        tell({ reachable: false, error: unavailable });
      }
      failedCalls = (failedCalls ?? 0) + 1;
      throw unavailable;
    }
    if (failedCalls !== undefined && number > outageFrom) {
      tell({ reachable: true, failedCalls });
      failedCalls = undefined;
      recoveredAt = calls;
    }
    return value;
  };
  return {
    kind: 'postgres',
    ...queryable(pool, guarded),
    otherInstances,
    async transaction(fn) {
      const client = await guarded(() => pool.connect());
      let broken: Error | undefined;
      // The pool listens for a client's errors only while it is idle: one lost between two queries
      // of this transaction (the server restarted, the backend terminated) would be an unhandled
      // 'error' event, which ends the process. Here it marks the client to discard; the next query fails.
      const lost = (error: Error) => (broken ??= error);
      client.on('error', lost);
      // A connection PostgreSQL ended with a reason of its own (this transaction idle past its limit)
      // fails the next query as lost: that reason is the failure, not an outage. A shutdown or a
      // terminated backend says the server is out of reach, and stays one.
      const inTransaction: Guard = (call) => guarded(() => call().catch((error: unknown) => Promise.reject(broken && isServersRefusal(broken) ? broken : error)));
      try {
        await inTransaction(() => client.query('BEGIN'));
        const value = await fn(queryable(client, inTransaction));
        await inTransaction(() => client.query('COMMIT'));
        return value;
      } catch (error) {
        // A client that cannot even roll back is discarded rather than returned to the pool; one whose
        // server is out of reach is discarded at once (a ROLLBACK would wait behind the query that
        // timed out, another query timeout; PostgreSQL ends the transaction with the connection).
        if (error instanceof StoreUnavailable) broken = error;
        else await client.query('ROLLBACK').catch((e: Error) => (broken = e));
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
