// Announcements between the instances of one PostgreSQL store (several sandboxes on one database
// and schema, behind a load balancer): PostgreSQL's NOTIFY after a commit, LISTEN on a connection
// of its own. What is lost (no connection, a pooler that drops notifications) costs only time: each
// instance's poller still finds the work at its next pass.
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { OtherInstances, StoreTopic } from './store.ts';

const TOPICS: readonly StoreTopic[] = ['notification-due'];
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;

/** Told when listening fails (and again at each failed retry, `retryInMs` later, doubling up to 30 s). */
export type OnListenFailure = (error: Error, retryInMs: number) => void;

/**
 * The channel of a schema: one per database and schema (NOTIFY is per database already), from a
 * hash so that any schema name makes a valid identifier of at most 63 bytes.
 */
export const channelOf = (schema: string) => `payment_platform_${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;

/**
 * `pool` publishes; listening opens one more connection to `databaseUrl`, on the first `listen()`,
 * and opens it again after a failure until `close()`. An instance does not hear its own
 * announcements (openStore tells its own listeners at once).
 */
export function postgresAnnouncements(pool: pg.Pool, databaseUrl: string, schema: string, onListenFailure?: OnListenFailure): OtherInstances & { close(): Promise<void> } {
  const channel = channelOf(schema);
  const instance = randomUUID();
  let closed = false;
  let heard: ((topic: StoreTopic) => void) | undefined;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let retryInMs = FIRST_RETRY_MS;
  let listenedBefore = false;

  async function connect(): Promise<void> {
    retry = undefined;
    const connection = new pg.Client({ connectionString: databaseUrl, application_name: 'payment-platform announcements' });
    client = connection;
    connection.on('error', (error) => lost(connection, error));
    connection.on('end', () => lost(connection, new Error('The connection listening for other instances ended')));
    connection.on('notification', ({ channel: from, payload }) => {
      const [sender, topic] = (payload ?? '').split(' ');
      if (from === channel && sender !== instance && TOPICS.includes(topic as StoreTopic)) heard?.(topic as StoreTopic);
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      lost(connection, error as Error);
      return;
    }
    if (closed || client !== connection) return;
    retryInMs = FIRST_RETRY_MS;
    // What was published while no connection listened is not replayed: wake once instead.
    if (listenedBefore) for (const topic of TOPICS) heard?.(topic);
    listenedBefore = true;
  }

  function lost(connection: pg.Client, error: Error): void {
    if (client !== connection) return; // already handled (an error, then its end), or closed
    client = undefined;
    connection.removeAllListeners('notification');
    connection.end().catch(() => {});
    onListenFailure?.(error, retryInMs);
    retry = setTimeout(() => void connect(), retryInMs).unref();
    retryInMs = Math.min(retryInMs * 2, LAST_RETRY_MS);
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
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => {});
    },
  };
}
