// Announcements between the instances of one PostgreSQL store (several sandboxes on one database
// and schema, behind a load balancer): PostgreSQL's NOTIFY after a commit, LISTEN on a connection
// of its own. What is lost (no connection, a pooler that drops notifications) costs only time: each
// instance's poller still finds the work at its next pass.
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { OtherInstances, StoreTopic } from './store.ts';

const TOPICS: readonly StoreTopic[] = ['notification-due', 'signing-keys-rotated'];
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;
/** A connection that listened this long before it was lost starts its retries from FIRST_RETRY_MS again. */
const STEADY_MS = 60_000;
const APPLICATION_NAME = 'payment-platform announcements';

/**
 * Whether the instance hears the others, told on a change only: when the connection is lost or
 * refused (once per outage, with the first retry's delay; retries wait twice as long each time, up
 * to 30 s), and when it listens again (with the failed attempts in between).
 */
export type ListenChange = { listening: false; error: Error; retryInMs: number } | { listening: true; failedAttempts: number };
export type OnListenChange = (change: ListenChange) => void;

export interface AnnouncementOptions {
  onListenChange?: OnListenChange | undefined;
  /** How often the listening connection is checked (its LISTEN run again, answered within `heartbeatTimeoutMs`); tests shorten it. */
  heartbeatMs?: number;
  heartbeatTimeoutMs?: number;
}

/**
 * The channel of a schema: one per database and schema (NOTIFY is per database already), from a
 * hash so that any schema name makes a valid identifier of at most 63 bytes.
 */
export const channelOf = (schema: string) => `payment_platform_${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;

/** The statement the instances of a schema listen with (and that pg_stat_activity then shows for their connection). */
export const listenStatementOf = (schema: string) => `LISTEN ${pg.escapeIdentifier(channelOf(schema))}`;

/**
 * `pool` publishes; listening opens one more connection to `databaseUrl`, on the first `listen()`,
 * and opens it again after a failure until `close()`. An instance does not hear its own
 * announcements (openStore tells its own listeners at once).
 *
 * A NOTIFY is sent through the pool after the commit, not inside the transaction (where PostgreSQL
 * would send it on commit without another round trip): a NOTIFY queue filled by anyone who may
 * connect fails the commit of every transaction that notifies, which would fail payments.
 */
export function postgresAnnouncements(pool: pg.Pool, databaseUrl: string, schema: string, options: AnnouncementOptions = {}): OtherInstances & { close(): Promise<void> } {
  const { onListenChange, heartbeatMs = 30_000, heartbeatTimeoutMs = 10_000 } = options;
  const channel = channelOf(schema);
  const listen = listenStatementOf(schema);
  const instance = randomUUID();
  let closed = false;
  let heard: ((topic: StoreTopic) => void) | undefined;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let retryInMs = FIRST_RETRY_MS;
  let listeningSince: number | undefined;
  /** Attempts failed since the connection was last listening; undefined before the first listened. */
  let failedAttempts: number | undefined;

  const tell = (change: ListenChange) => {
    try {
      onListenChange?.(change);
    } catch {
      // the caller's own failure: listening goes on
    }
  };

  async function connect(): Promise<void> {
    retry = undefined;
    // A socket that goes silent (a NAT or load balancer dropping it, a failover without a reset) is
    // found by TCP keepalive and by the heartbeat below; a start that never answers, by the timeout.
    const connection = new pg.Client({ connectionString: databaseUrl, keepAlive: true, keepAliveInitialDelayMillis: 10_000, connectionTimeoutMillis: heartbeatTimeoutMs });
    client = connection;
    connection.on('error', (error) => lost(connection, error));
    connection.on('end', () => lost(connection, new Error('The connection listening for other instances ended')));
    connection.on('notification', ({ channel: from, payload }) => {
      const [sender, topic] = (payload ?? '').split(' ');
      if (from === channel && sender !== instance && TOPICS.includes(topic as StoreTopic)) heard?.(topic as StoreTopic);
    });
    try {
      await connection.connect();
      // The name operators find it by, whatever DATABASE_URL's own application_name says.
      await connection.query(`SET application_name = '${APPLICATION_NAME}'`);
      // This session is idle by design: a role's or database's idle_session_timeout (PostgreSQL 14+) would end it every time.
      await connection.query('SET idle_session_timeout = 0').catch(() => {});
      await connection.query(listen);
    } catch (error) {
      lost(connection, error as Error);
      return;
    }
    if (closed || client !== connection) return;
    listeningSince = Date.now();
    heartbeat = setInterval(() => void check(connection), heartbeatMs).unref();
    // What was published while no connection listened is not replayed: wake once instead. The first
    // LISTEN too: what was published between the listener's own first read and this LISTEN (a
    // rotation of the signing keys by another instance, a delivery due) was heard by no one here.
    if (failedAttempts !== undefined) tell({ listening: true, failedAttempts });
    failedAttempts = 0;
    for (const topic of TOPICS) heard?.(topic);
  }

  async function check(connection: pg.Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`The connection listening for other instances did not answer within ${heartbeatTimeoutMs} ms`)), heartbeatTimeoutMs);
    });
    try {
      // LISTEN again: a no-op on a channel listened to already, which also leaves the statement operators see in pg_stat_activity.
      await Promise.race([connection.query(listen), timeout]);
    } catch (error) {
      lost(connection, error as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  function lost(connection: pg.Client, error: Error): void {
    if (client !== connection) return; // already handled (an error, then its end), or closed
    client = undefined;
    clearInterval(heartbeat);
    connection.removeAllListeners('notification');
    connection.end().catch(() => {});
    // A connection ended soon after it listened (a server that keeps ending it) does not start over at 1 s.
    if (listeningSince !== undefined && Date.now() - listeningSince >= STEADY_MS) retryInMs = FIRST_RETRY_MS;
    listeningSince = undefined;
    const delay = retryInMs;
    retryInMs = Math.min(retryInMs * 2, LAST_RETRY_MS);
    retry = setTimeout(() => void connect(), delay).unref();
    const firstOfOutage = !failedAttempts;
    failedAttempts = (failedAttempts ?? 0) + 1;
    if (firstOfOutage) tell({ listening: false, error, retryInMs: delay });
  }

  return {
    publish(topic) {
      if (closed) return;
      pool.query('SELECT pg_notify($1, $2)', [channel, `${instance} ${topic}`]).catch(() => {});
    },
    listen(listener) {
      if (heard || closed) return;
      heard = listener;
      void connect();
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => {});
    },
  };
}
