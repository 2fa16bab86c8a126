// The store behind one interface: PGlite (memory, data directory) and, when DATABASE_URL is set,
// a PostgreSQL server. The same suite runs against each.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadSigningKeys } from '../../server/authentication/keys.ts';
import { authenticationRepository } from '../../server/authentication/repository.ts';
import { createLogger } from '../../server/http/logging.ts';
import { DEMO_SELLER, DEMO_SELLER_ID, ensureDemoSeller } from '../../server/sandbox/demo-seller.ts';
import { encryptionKeyFileOf } from '../../server/store/encryption-key.ts';
import { listMigrations, migrate } from '../../server/store/migrate.ts';
import { openStore } from '../../server/store/open-store.ts';
import type { ListenChange } from '../../server/store/postgres-announcements.ts';
import { openPostgresStore, type ReachChange } from '../../server/store/postgres-store.ts';
import { rethrowWithoutValues, StoreUnavailable, type Store } from '../../server/store/store.ts';
import { DEMO, ISSUER, startTestServer, tokenForm } from './support/server.ts';
import { DATABASE_URL, freshPostgresSchema, freshPostgresSchemaUrl, listeningAfterItsWake, listeningInstances, openUnmigratedPglite, terminateListeners } from './support/stores.ts';
import { tcpProxy } from './support/tcp-proxy.ts';

const silent = createLogger('silent');

/**
 * `freshDatabase()` gives, per test, an empty database and a way to open stores on it: two stores
 * opened in one test are two instances on the same database.
 */
type Opener = () => Promise<Store>;

/** A transaction that inserts `id` into `outbox` and announces a due delivery, then throws: rolled back. */
const rolledBackAnnouncing = (store: Store, id: number) =>
  expect(
    store.transaction(async (tx) => {
      await tx.query('INSERT INTO outbox VALUES ($1)', [id]);
      tx.announce!('notification-due');
      throw new Error('rolled back');
    }),
  ).rejects.toThrow('rolled back');
function storeSuite(name: string, freshDatabase: () => Promise<Opener>) {
  describe(name, () => {
    let open: Opener;
    beforeEach(async () => {
      open = await freshDatabase();
    });

    it('applies the migrations once, in order, and records them (running twice changes nothing)', async () => {
      const store = await open();
      try {
        const versions = (await listMigrations()).map((m) => m.version);
        expect(await migrate(store)).toEqual(versions);
        expect(await migrate(store)).toEqual([]);
        const { rows } = await store.query<{ version: string; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
        expect(rows.map((r) => r.version)).toEqual(versions);
        expect(rows[0]).toEqual({ version: '001', name: 'sellers_and_credentials' });
      } finally {
        await store.close();
      }
    });

    it('applies each migration exactly once when two instances migrate at once', async () => {
      const [a, b] = [await open(), await open()];
      try {
        const results = await Promise.all([migrate(a), migrate(b)]);
        const versions = (await listMigrations()).map((m) => m.version);
        expect(results.flat().sort()).toEqual(versions);
        expect((await a.query('SELECT version FROM schema_migrations')).rowCount).toBe(versions.length);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('checks an up-to-date database with one query: no transaction, no lock', async () => {
      const store = await open();
      try {
        await migrate(store);
        const queries: string[] = [];
        const watched: Store = {
          ...store,
          query: (sql, params) => (queries.push(sql), store.query(sql, params)),
          transaction: () => Promise.reject(new Error('no transaction expected')),
        };
        expect(await migrate(watched)).toEqual([]);
        expect(queries).toEqual(['SELECT version, name FROM schema_migrations']);
      } finally {
        await store.close();
      }
    });

    it('says which recorded migrations it does not have (a newer version migrated the database), and starts on it', async () => {
      const store = await open();
      try {
        await migrate(store);
        await store.query("INSERT INTO schema_migrations (version, name) VALUES ('998', 'later_change'), ('999', 'last_change')");
        const told: string[][] = [];
        expect(await migrate(store, undefined, { onNewer: (newer) => told.push(newer) })).toEqual([]);
        expect(told).toEqual([['998_later_change', '999_last_change']]);
        const none: string[][] = [];
        await store.query("DELETE FROM schema_migrations WHERE version >= '998'");
        await migrate(store, undefined, { onNewer: (newer) => none.push(newer) });
        expect(none).toEqual([]);
      } finally {
        await store.close();
      }
    });

    it('rolls a failing migration back and does not record it', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
      const store = await open();
      try {
        await writeFile(join(dir, '001_first.sql'), 'CREATE TABLE first_table (id int);');
        await writeFile(join(dir, '002_broken.sql'), 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;');
        await expect(migrate(store, dir)).rejects.toThrow(/no_such_table/);
        const { rows } = await store.query<{ version: string }>('SELECT version FROM schema_migrations');
        expect(rows).toEqual([{ version: '001' }]);
        const tables = await store.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done' AND table_schema = current_schema()");
        expect(tables.rowCount).toBe(0);
      } finally {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('stores text[] and jsonb and reads them back as arrays and objects', async () => {
      const store = await open();
      try {
        await migrate(store);
        await ensureDemoSeller(store, DEMO, silent);
        const { rows } = await store.query<Record<string, unknown>>('SELECT currencies, services, payments FROM sellers WHERE seller_id = $1', [DEMO_SELLER_ID]);
        expect(rows[0]).toEqual({ currencies: ['BRL'], services: DEMO_SELLER.services, payments: DEMO_SELLER.payments });
      } finally {
        await store.close();
      }
    });

    it('seeds the demo client once: a restart keeps its stored secret, and warns when the configured one differs', async () => {
      const store = await open();
      try {
        await migrate(store);
        await ensureDemoSeller(store, DEMO, silent);
        const stored = async () => (await authenticationRepository(store).findApiClient(DEMO.clientId))?.secretHash;
        const hash = await stored();
        expect(hash).toMatch(/^\$scrypt\$/);

        const lines: Array<{ level: number; msg: string }> = [];
        const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
        await ensureDemoSeller(store, DEMO, logger);
        expect(await stored()).toBe(hash);
        expect(lines).toEqual([]);

        await ensureDemoSeller(store, { ...DEMO, clientSecret: 'another-secret' }, logger);
        expect(await stored()).toBe(hash);
        expect(lines.map((l) => l.msg)).toEqual([expect.stringContaining('already exists with another secret')]);
      } finally {
        await store.close();
      }
    });

    it('commits a transaction, rolls one back when it throws, and serialises concurrent ones', async () => {
      const store = await open();
      try {
        await store.exec('CREATE TABLE counters (id int PRIMARY KEY, value int NOT NULL); INSERT INTO counters VALUES (1, 0);');
        await expect(
          store.transaction(async (tx) => {
            await tx.query('UPDATE counters SET value = 100 WHERE id = 1');
            throw new Error('changed my mind');
          }),
        ).rejects.toThrow('changed my mind');
        // Read, wait, write: interleaved statements would lose increments.
        await Promise.all(
          Array.from({ length: 20 }, () =>
            store.transaction(async (tx) => {
              const { rows } = await tx.query<{ value: number }>('SELECT value FROM counters WHERE id = 1 FOR UPDATE');
              await new Promise((resolve) => setTimeout(resolve, 1));
              await tx.query('UPDATE counters SET value = $1 WHERE id = 1', [rows[0]!.value + 1]);
            }),
          ),
        );
        const { rows } = await store.query<{ value: number }>('SELECT value FROM counters WHERE id = 1');
        expect(rows[0]!.value).toBe(20);
      } finally {
        await store.close();
      }
    });

    it('announces what a transaction announced once it has committed, once per topic, and nothing when it rolls back', async () => {
      const store = await open();
      try {
        await store.exec('CREATE TABLE outbox (id int PRIMARY KEY)');
        await listeningAfterItsWake(store);
        const heard: string[] = [];
        const stop = store.onAnnounced!('notification-due', async () => {
          // A listener sees the transaction's rows: it is told after the commit.
          const { rows } = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox');
          heard.push(`rows ${rows[0]!.n}`);
        });
        await store.transaction(async (tx) => {
          await tx.query('INSERT INTO outbox VALUES (1)');
          tx.announce!('notification-due');
          tx.announce!('notification-due');
          expect(heard).toEqual([]); // not while the transaction is open
        });
        await expect.poll(() => heard, { timeout: 10_000 }).toEqual(['rows 1']);
        await rolledBackAnnouncing(store, 2);
        store.announce!('notification-due'); // outside a transaction: at once
        await expect.poll(() => heard, { timeout: 10_000 }).toEqual(['rows 1', 'rows 1']);
        stop();
        store.announce!('notification-due');
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(heard).toHaveLength(2);
        // A listener that throws neither fails the committed transaction nor keeps the next listener from hearing.
        let told = 0;
        const stopFailing = store.onAnnounced!('notification-due', () => {
          throw new Error('listener failed');
        });
        const stopCounting = store.onAnnounced!('notification-due', () => void told++);
        await expect(store.transaction(async (tx) => (tx.announce!('notification-due'), 'committed'))).resolves.toBe('committed');
        expect(told).toBe(1);
        stopFailing();
        stopCounting();
      } finally {
        await store.close();
      }
    });

    it('tells another instance what a transaction announced once it committed, once, and nothing of a rollback', async () => {
      const [a, b] = [await open(), await open()];
      try {
        await a.exec('CREATE TABLE outbox (id int PRIMARY KEY)');
        await Promise.all([listeningAfterItsWake(a), listeningAfterItsWake(b)]);
        const heard = { a: [] as number[], b: [] as number[] };
        // Each listener reads the table through its own instance: the row is there when it is told.
        const count = async (store: Store) => (await store.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox')).rows[0]!.n;
        const stopA = a.onAnnounced!('notification-due', async () => void heard.a.push(await count(a)));
        const stopB = b.onAnnounced!('notification-due', async () => void heard.b.push(await count(b)));
        if (a.kind === 'postgres') await expect.poll(() => listeningInstances(a), { timeout: 5_000 }).toBe(2);
        await a.transaction(async (tx) => {
          await tx.query('INSERT INTO outbox VALUES (1)');
          tx.announce!('notification-due');
        });
        await expect.poll(() => heard, { timeout: 5_000 }).toEqual({ a: [1], b: [1] });
        await rolledBackAnnouncing(b, 2);
        await b.transaction(async (tx) => {
          await tx.query('INSERT INTO outbox VALUES (3)');
          tx.announce!('notification-due');
        });
        await expect.poll(() => heard, { timeout: 5_000 }).toEqual({ a: [1, 2], b: [1, 2] });
        await new Promise((resolve) => setTimeout(resolve, 200)); // no echo of an instance's own announcement comes later
        expect(heard).toEqual({ a: [1, 2], b: [1, 2] });
        stopA();
        stopB();
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('keeps one active signing key when two instances start at once', async () => {
      const [a, b] = [await open(), await open()];
      try {
        await migrate(a);
        const [ka, kb] = await Promise.all([loadSigningKeys(authenticationRepository(a)), loadSigningKeys(authenticationRepository(b))]);
        expect(ka.kid).toBe(kb.kid);
        expect((await a.query('SELECT 1 FROM signing_keys WHERE active')).rowCount).toBe(1);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  });
}

/**
 * PGlite in memory is one connection to one database: the instances of a test share it. It starts
 * from the run's initdb cluster, no migration applied: the suite applies them.
 */
async function freshPglite(): Promise<Opener> {
  const db = await openUnmigratedPglite();
  let users = 0;
  return async () => {
    users++;
    return { ...db, close: async () => (--users === 0 ? db.close() : undefined) };
  };
}
storeSuite('PGlite store (in memory)', freshPglite);

if (DATABASE_URL) {
  storeSuite('PostgreSQL store (DATABASE_URL)', freshPostgresSchema);

  /** A new schema, and a TCP proxy to its server (what a network may do to the connections through it). */
  const schemaThroughProxy = async () => {
    const url = await freshPostgresSchemaUrl();
    return { url, proxy: await tcpProxy({ host: new URL(url).hostname, port: Number(new URL(url).port) }) };
  };

  describe('PostgreSQL store: a server that fails or stops answering', () => {
    it('survives the backend of a transaction terminated between two of its queries: that transaction fails, the next one works', async () => {
      const url = await freshPostgresSchemaUrl();
      const store = await openPostgresStore(url);
      const other = await openPostgresStore(url);
      try {
        const failed = store.transaction(async (tx) => {
          const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await other.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
          // The client hears of it between queries (an 'error' event; unheard, it ended the process).
          await new Promise((resolve) => setTimeout(resolve, 300));
          await tx.query('SELECT 1');
        });
        await expect(failed).rejects.toThrow();
        const again = await store.transaction(async (tx) => (await tx.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one);
        expect(again).toBe(1);
        expect((await store.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await Promise.all([store.close(), other.close()]);
      }
    });

    it('has PostgreSQL cancel a statement past its time limit (its locks go), unless the transaction lifts it as migrations and reset() do', async () => {
      const url = await freshPostgresSchemaUrl();
      const store = await openPostgresStore(url, { statementTimeoutMs: 300 });
      try {
        const started = Date.now();
        await expect(store.transaction(async (tx) => {
          await tx.exec('CREATE TABLE held (id int)');
          await tx.exec('LOCK TABLE held IN ACCESS EXCLUSIVE MODE');
          await tx.query('SELECT pg_sleep(5)');
        })).rejects.toMatchObject({ code: '57014' }); // query_canceled, on the server
        expect(Date.now() - started).toBeLessThan(3_000);
        const sleeping = await store.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(5)%' AND state = 'active'");
        expect(sleeping.rows[0]!.n).toBe('0');
        const lifted = await store.transaction(async (tx) => {
          await tx.exec('SET LOCAL statement_timeout = 0');
          return (await tx.query<{ done: number }>('SELECT 1 AS done FROM pg_sleep(0.6)')).rows[0]!.done;
        });
        expect(lifted).toBe(1);
      } finally {
        await store.close();
      }
    });

    /** A store on a new schema through a TCP proxy, its outages and their ends recorded. */
    const reachedThroughProxy = async (limits: { queryTimeoutMs?: number; connectTimeoutMs?: number } = {}) => {
      const { url, proxy } = await schemaThroughProxy();
      const changes: ReachChange[] = [];
      const store = await openPostgresStore(proxy.url(url), { connectTimeoutMs: 500, ...limits, onReachChange: (change) => void changes.push(change) });
      return { url, proxy, changes, store };
    };

    it('starts no new outage when a call begun before the last one ended fails later (stuck on a silent connection until its query timeout)', async () => {
      // 4 s: the stuck query must outlast the refusal, the proxy's return and a new connection's SCRAM, on a loaded machine too.
      const { proxy, changes, store } = await reachedThroughProxy({ queryTimeoutMs: 4_000 });
      try {
        await store.query('SELECT 1'); // the pool's one connection
        proxy.freeze(); // it goes silent
        const stuck = store.query('SELECT 1').catch((e: unknown) => e); // on it: no answer until the query timeout
        await new Promise((resolve) => setTimeout(resolve, 100));
        proxy.down();
        const refused = await store.query('SELECT 1').catch((e: unknown) => e); // a second connection, refused: the outage begins
        expect(refused).toBeInstanceOf(StoreUnavailable);
        proxy.up();
        await store.query('SELECT 1'); // begun after: the outage ends
        const late = await stuck;
        expect(late).toBeInstanceOf(StoreUnavailable);
        expect((late as Error).message).toMatch(/cannot be reached: no answer within the query timeout \(4000 ms\)$/);
        expect(changes).toEqual([{ reachable: false, error: refused }, { reachable: true, failedCalls: 1 }]);
      } finally {
        await store.close();
        await proxy.close();
      }
    });

    it('fails a transaction whose connection went silent after one query timeout, not two: no ROLLBACK waits behind the query', async () => {
      const { proxy, store } = await reachedThroughProxy({ queryTimeoutMs: 2_000 });
      try {
        await store.query('SELECT 1'); // the pool's one connection, idle
        proxy.freeze(); // silent from now on
        const started = Date.now();
        const failed = await store.transaction(async (tx) => tx.query('SELECT 1')).catch((e: unknown) => e);
        expect(failed).toBeInstanceOf(StoreUnavailable);
        expect(Date.now() - started).toBeLessThan(3_800); // a ROLLBACK on it would take another 2_000
      } finally {
        await store.close();
        await proxy.close();
      }
    });

    it("has PostgreSQL end a transaction whose instance went silent between two of its statements (a partition): its row locks go after the idle-in-transaction limit", async () => {
      const { url, proxy } = await schemaThroughProxy();
      const silenced = await openPostgresStore(proxy.url(url), { idleInTransactionTimeoutMs: 500, queryTimeoutMs: 3_000 });
      // Straight to the server; a wait for the lock past 3 s fails (query_canceled) rather than hanging.
      const other = await openPostgresStore(url, { statementTimeoutMs: 3_000 });
      try {
        await other.exec('CREATE TABLE held (id int PRIMARY KEY, n int NOT NULL); INSERT INTO held VALUES (1, 0)');
        let locked!: () => void;
        const holding = new Promise<void>((resolve) => (locked = resolve));
        const frozen = silenced
          .transaction(async (tx) => {
            await tx.query('SELECT n FROM held WHERE id = 1 FOR UPDATE');
            locked();
            await new Promise((resolve) => setTimeout(resolve, 100)); // the network goes meanwhile
            await tx.query('UPDATE held SET n = n + 100 WHERE id = 1'); // never reaches the server
          })
          .catch((e: unknown) => e);
        await holding;
        // Silent both ways, and never closed: the server keeps that session (its transaction, its
        // lock) until something on its side ends it. Without the limit, that is its TCP keep-alive.
        proxy.freeze();
        const started = Date.now();
        await other.query('UPDATE held SET n = n + 1 WHERE id = 1'); // waits for the row lock
        expect(Date.now() - started).toBeLessThan(2_500);
        expect((await other.query<{ n: number }>('SELECT n FROM held WHERE id = 1')).rows).toEqual([{ n: 1 }]);
        expect(await frozen).toBeInstanceOf(StoreUnavailable); // at its query timeout, on this side
        // The store's own limit, and the default every store gets.
        const defaults = await openPostgresStore(url);
        try {
          const { rows } = await defaults.query<{ limit: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS limit");
          expect(rows).toEqual([{ limit: '1min' }]);
        } finally {
          await defaults.close();
        }
      } finally {
        await Promise.all([silenced.close(), other.close()]);
        await proxy.close();
      }
    });

    it('fails a transaction of its own left idle past that limit with PostgreSQL\'s reason (25P03), not as an outage', async () => {
      const changes: ReachChange[] = [];
      const store = await openPostgresStore(await freshPostgresSchemaUrl(), { idleInTransactionTimeoutMs: 300, onReachChange: (change) => void changes.push(change) });
      try {
        const failed = await store
          .transaction(async (tx) => {
            await tx.query('SELECT 1');
            await new Promise((resolve) => setTimeout(resolve, 800)); // PostgreSQL ends the session meanwhile
            await tx.query('SELECT 2');
          })
          .catch((e: unknown) => e);
        expect(failed).not.toBeInstanceOf(StoreUnavailable);
        expect(failed).toMatchObject({ code: '25P03', message: 'terminating connection due to idle-in-transaction timeout' });
        expect((await store.query<{ n: number }>('SELECT 3 AS n')).rows).toEqual([{ n: 3 }]); // the pool goes on
        expect(changes).toEqual([]);
      } finally {
        await store.close();
      }
    });

    /**
     * Returns once `count` sessions on the server run `sql` (seen from a connection of its own): a
     * fixed wait was too short for a pool's connections to be made on a loaded machine.
     */
    const runningOnTheServer = async (databaseUrl: string, sql: string, count: number) => {
      const observer = await openPostgresStore(databaseUrl);
      try {
        const running = async () => (await observer.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1 AND state = 'active'", [sql])).rows[0]!.n;
        await expect.poll(running, { timeout: 10_000, interval: 20 }).toBe(count);
      } finally {
        await observer.close();
      }
    };

    it('takes a wait for a pooled connection for an outage when every one is stuck on a server gone silent and a new one gets no answer either', async () => {
      const { url, proxy, changes, store } = await reachedThroughProxy({ connectTimeoutMs: 1_000, queryTimeoutMs: 5_000 });
      try {
        const sql = `SELECT pg_sleep(3) -- ${randomUUID()}`;
        const stuck = Array.from({ length: 10 }, () => store.query(sql).catch((e: unknown) => e)); // the pool's 10 connections
        await runningOnTheServer(url, sql, 10);
        proxy.freeze(); // they go silent: no answer until their query timeout
        proxy.silent(); // and a new connection gets none either
        const started = Date.now();
        const waited = await store.query('SELECT 1').catch((e: unknown) => e);
        expect(waited).toBeInstanceOf(StoreUnavailable);
        expect((waited as Error).message).toMatch(/cannot be reached: no pooled connection came free within the connect timeout \(1000 ms\), and a new one got no answer either$/);
        expect(Date.now() - started).toBeLessThan(4_000); // told at once (the pool's wait, then the check's), not at the query timeout
        expect(changes).toEqual([{ reachable: false, error: waited }]);
        proxy.up();
        for (const late of await Promise.all(stuck)) expect(late).toBeInstanceOf(StoreUnavailable); // part of the same outage
        await store.query('SELECT 1');
        expect(changes).toEqual([{ reachable: false, error: waited }, { reachable: true, failedCalls: 11 }]);
      } finally {
        await store.close();
        await proxy.close();
      }
    });

    /** Every pooled connection busy (10 sleeps), a call that waits for one in vain: the pool's error, no outage told. */
    const expectPoolWaitNotOutage = async (store: Store, changes: ReachChange[], databaseUrl: string) => {
      const sql = `SELECT pg_sleep(3) -- ${randomUUID()}`; // this test's own, counted apart from another file's
      const busy = Array.from({ length: 10 }, () => store.query(sql)); // the pool's 10 connections
      await runningOnTheServer(databaseUrl, sql, 10);
      const waited = await store.query('SELECT 1').catch((e: unknown) => e);
      expect(waited).not.toBeInstanceOf(StoreUnavailable);
      expect((waited as Error).message).toMatch(/^timeout exceeded when trying to connect/);
      await Promise.all(busy);
      expect(changes).toEqual([]);
    };

    it('takes a wait for a pooled connection for the pool\'s when PostgreSQL refuses a new connection itself (a connection limit reached): it answered', async () => {
      const admin = await openStore({ databaseUrl: DATABASE_URL });
      const role = `limited_${randomUUID().replaceAll('-', '')}`;
      await admin.exec(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 10`); // the pool's 10, and not one more
      const url = new URL(DATABASE_URL!);
      url.username = role;
      url.password = '';
      const changes: ReachChange[] = [];
      const store = await openPostgresStore(url.toString(), { connectTimeoutMs: 1_000, onReachChange: (change) => void changes.push(change) });
      try {
        await expectPoolWaitNotOutage(store, changes, DATABASE_URL!); // the check's connection: too many connections for the role
      } finally {
        await store.close();
        await admin.exec(`DROP ROLE ${role}`);
        await admin.close();
      }
    });

    it('takes a wait for a free pooled connection (every one busy) for the pool\'s, not an outage', async () => {
      const { url, proxy, changes, store } = await reachedThroughProxy({ connectTimeoutMs: 1_000 });
      try {
        await expectPoolWaitNotOutage(store, changes, url);
      } finally {
        await store.close();
        await proxy.close();
      }
    });

    it('throws StoreUnavailable while the server cannot be reached, naming it, and says so once per outage and once when it answers again', async () => {
      const { url, proxy, changes, store } = await reachedThroughProxy();
      try {
        expect((await store.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
        proxy.down(); // new connections refused
        proxy.cut(); // the pool's idle ones lost
        const where = `127.0.0.1:${new URL(proxy.url(url)).port}`;
        const failures = [
          await store.query('SELECT 1').catch((e: unknown) => e), // a pooled connection found lost, or a new one refused
          await store.query('SELECT 1').catch((e: unknown) => e),
          await store.transaction(async (tx) => tx.query('SELECT 1')).catch((e: unknown) => e),
        ];
        for (const failure of failures) {
          expect(failure).toBeInstanceOf(StoreUnavailable);
          expect((failure as Error).message).toMatch(new RegExp(`^The PostgreSQL server at ${where.replace(/\./g, '\\.')} \\(the database URL\\) cannot be reached: (the connection was refused|the connection was lost)`));
          expect((failure as Error).cause).toBeInstanceOf(Error);
        }
        expect(changes).toEqual([{ reachable: false, error: failures[0] }]); // once for the outage
        proxy.up();
        expect((await store.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
        expect(changes[1]).toEqual({ reachable: true, failedCalls: 3 });
        // A statement the server refuses is its answer, not an outage.
        const refused = await store.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
        expect(refused).not.toBeInstanceOf(StoreUnavailable);
        expect(refused).toMatchObject({ code: '42P01' });
        expect(changes).toHaveLength(2);
      } finally {
        await store.close();
        await proxy.close();
      }
    });

    it('ends an outage only by a call begun after its first failure, not by one in flight since before that comes back answered', async () => {
      const { proxy, changes, store } = await reachedThroughProxy();
      try {
        await store.query('SELECT 1'); // the pool's one connection
        const slow = store.query('SELECT pg_sleep(0.5)'); // holds it
        await new Promise((resolve) => setTimeout(resolve, 100));
        proxy.down();
        const refused = await store.query('SELECT 1').catch((e: unknown) => e); // needs a second connection: refused
        expect(refused).toBeInstanceOf(StoreUnavailable);
        await slow; // begun before the outage, answered after its first failure
        expect(changes).toEqual([{ reachable: false, error: refused }]);
        await store.query('SELECT 1'); // on the first connection, idle again
        expect(changes).toEqual([{ reachable: false, error: refused }, { reachable: true, failedCalls: 1 }]);
      } finally {
        await store.close();
        await proxy.close();
      }
    });

    it('fails a query the server does not answer within the limit, and a connection not ready within its own, then works once it answers', async () => {
      const { url, proxy } = await schemaThroughProxy();
      const store = await openPostgresStore(proxy.url(url), { queryTimeoutMs: 500, connectTimeoutMs: 500 });
      try {
        const started = Date.now();
        proxy.freeze(); // the open connection: no answer, no reset
        proxy.silent(); // new ones: accepted, never answered
        await expect(store.query('SELECT 1')).rejects.toThrow(/timeout/i);
        await expect(store.transaction(async (tx) => tx.query('SELECT 1'))).rejects.toThrow(/timeout/i);
        expect(Date.now() - started).toBeLessThan(5_000);
        proxy.up();
        expect((await store.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
        // A store whose server never answers at all is refused at start, within the limit.
        proxy.silent();
        const opening = Date.now();
        const where = `${new URL(proxy.url(url)).hostname}:${new URL(proxy.url(url)).port}`;
        await expect(openPostgresStore(proxy.url(url), { connectTimeoutMs: 500 })).rejects.toThrow(
          `Cannot connect to the PostgreSQL server at ${where} (the database URL): no answer within the connect timeout (500 ms)`,
        );
        expect(Date.now() - opening).toBeLessThan(3_000);
      } finally {
        await store.close();
        await proxy.close();
      }
    }, 20_000);
  });

  describe('PostgreSQL store: the connection listening for other instances', () => {
    const announceThrough = (store: Store) => store.transaction(async (tx) => tx.announce!('notification-due'));

    it('is opened with the first listener only, hears nothing of another schema, and is closed with the store', async () => {
      const [open, openElsewhere] = [await freshPostgresSchema(), await freshPostgresSchema()];
      const [a, b, elsewhere] = [await open(), await open(), await openElsewhere()];
      try {
        expect(await listeningInstances(a)).toBe(0); // a store nobody listens to holds no extra connection
        let heard = 0;
        let heardBySecond = 0;
        b.onAnnounced!('notification-due', () => void heard++);
        b.onAnnounced!('notification-due', () => void heardBySecond++); // one connection for both
        elsewhere.onAnnounced!('notification-due', () => void heard++);
        await expect.poll(() => listeningInstances(b), { timeout: 5_000 }).toBe(1);
        await expect.poll(() => listeningInstances(elsewhere), { timeout: 5_000 }).toBe(1);
        // Each store's first LISTEN wakes its listeners once: what was published before it was heard by no one.
        await expect.poll(() => heard, { timeout: 5_000 }).toBe(2);
        expect(heardBySecond).toBe(1);
        await announceThrough(elsewhere); // its own listener, at once
        expect(heard).toBe(3);
        await announceThrough(a);
        await expect.poll(() => heard, { timeout: 5_000 }).toBe(4);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(heard).toBe(4); // `elsewhere`, on another schema, heard nothing of `a`
        expect(heardBySecond).toBe(2);
        await b.close();
        await expect.poll(() => listeningInstances(a), { timeout: 5_000 }).toBe(0);
      } finally {
        await Promise.all([a.close(), b.close().catch(() => {}), elsewhere.close()]); // b may be closed already
      }
    });

    it('is opened again after it was lost, saying so once per outage, and wakes its listeners once in case it missed something', async () => {
      const open = await freshPostgresSchema();
      const changes: ListenChange[] = [];
      const [a, b] = [
        await open(),
        await open({
          onOtherInstancesListening: (change) => {
            changes.push(change);
            throw new Error('a caller whose callback fails'); // listening goes on
          },
        }),
      ];
      try {
        let heard = 0;
        b.onAnnounced!('notification-due', () => void heard++);
        await expect.poll(() => listeningInstances(a), { timeout: 5_000 }).toBe(1);
        await expect.poll(() => heard, { timeout: 5_000 }).toBe(1); // woken once by its first LISTEN
        expect(changes).toEqual([]); // the first connection is no change
        await terminateListeners(a);
        await expect.poll(() => changes, { timeout: 5_000 }).toEqual([{ listening: false, error: expect.objectContaining({ message: expect.stringMatching(/terminat/i) }), retryInMs: 1_000 }]);
        expect(heard).toBe(1);
        // Listening again a second later; its listeners are told once, since what was published meanwhile is lost.
        await expect.poll(() => listeningInstances(a), { timeout: 5_000, interval: 100 }).toBe(1);
        await expect.poll(() => heard, { timeout: 5_000 }).toBe(2);
        expect(changes[1]).toEqual({ listening: true, failedAttempts: 1 });
        await announceThrough(a);
        await expect.poll(() => heard, { timeout: 5_000 }).toBe(3);
        // Lost again soon after it listened: the next retry waits longer (a server that keeps ending it is not hammered).
        await terminateListeners(a);
        await expect.poll(() => changes.length, { timeout: 5_000 }).toBe(3);
        expect(changes[2]).toMatchObject({ listening: false, retryInMs: 2_000 });
        // Closed while waiting to listen again: it is not opened again.
        await b.close();
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        expect(await listeningInstances(a)).toBe(0);
        expect(changes).toHaveLength(3);
      } finally {
        await Promise.all([a.close(), b.close().catch(() => {})]); // b may be closed already
      }
    });

    it('keeps listening whatever DATABASE_URL says of idle sessions, under its own application_name', async () => {
      const url = new URL(await freshPostgresSchemaUrl());
      url.searchParams.set('options', `${url.searchParams.get('options')} -c idle_session_timeout=400`);
      url.searchParams.set('application_name', 'merchant-app');
      const changes: ListenChange[] = [];
      const [a, b] = [await openStore({ databaseUrl: url.toString() }), await openStore({ databaseUrl: url.toString(), onOtherInstancesListening: (change) => void changes.push(change) })];
      try {
        let heard = 0;
        b.onAnnounced!('notification-due', () => void heard++);
        await expect.poll(() => listeningInstances(a), { timeout: 5_000 }).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 1_200)); // three idle timeouts
        expect(changes).toEqual([]);
        const { rows } = await a.query<{ name: string }>(`SELECT application_name AS name FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND application_name <> ''`);
        expect(rows.map((row) => row.name)).toContain('payment-platform announcements');
        expect(rows.map((row) => row.name)).not.toContain('merchant-app');
        expect(heard).toBe(1); // its first LISTEN's wake
        await announceThrough(a);
        await expect.poll(() => heard, { timeout: 5_000 }).toBe(2);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('finds a connection gone silent by its heartbeat, and listens again once the network lets it', async () => {
      const { url, proxy } = await schemaThroughProxy();
      const a = await openStore({ databaseUrl: url });
      const changes: ListenChange[] = [];
      const b = await openPostgresStore(proxy.url(url), { onListenChange: (change) => void changes.push(change), heartbeatMs: 200, heartbeatTimeoutMs: 300 });
      try {
        const heard: string[] = [];
        b.otherInstances!.listen((topic) => void heard.push(topic));
        await expect.poll(() => listeningInstances(a), { timeout: 5_000 }).toBe(1);
        // Woken once, with every topic, by its first LISTEN (what was published before it is lost).
        await expect.poll(() => heard, { timeout: 5_000 }).toEqual(['notification-due', 'signing-keys-rotated']);
        await announceThrough(a);
        await expect.poll(() => heard, { timeout: 5_000 }).toEqual(['notification-due', 'signing-keys-rotated', 'notification-due']);
        proxy.silent(); // new connections: accepted, never answered
        proxy.freeze(); // the open one: no reset, no answer
        await expect.poll(() => changes, { timeout: 5_000 }).toEqual([{ listening: false, error: expect.objectContaining({ message: 'The connection listening for other instances did not answer within 300 ms' }), retryInMs: 1_000 }]);
        await new Promise((resolve) => setTimeout(resolve, 1_500)); // a retry timed out meanwhile: no second warning
        expect(changes).toHaveLength(1);
        proxy.up();
        await expect.poll(() => changes.length, { timeout: 8_000 }).toBe(2);
        expect(changes[1]).toEqual({ listening: true, failedAttempts: expect.any(Number) });
        expect((changes[1] as { failedAttempts: number }).failedAttempts).toBeGreaterThanOrEqual(2);
        // Woken once on listening again, with every topic (what was published meanwhile is lost: a
        // delivery due, or a key rotation, which the signing keys then read).
        await expect.poll(() => heard, { timeout: 5_000 }).toEqual(['notification-due', 'signing-keys-rotated', 'notification-due', 'notification-due', 'signing-keys-rotated']);
        await announceThrough(a);
        await expect.poll(() => heard, { timeout: 5_000 }).toHaveLength(6);
        expect(heard.at(-1)).toBe('notification-due');
      } finally {
        await Promise.all([a.close(), b.close()]);
        await proxy.close();
      }
    });
  });
} else {
  describe.skip('PostgreSQL store: skipped because DATABASE_URL is not set (set it to run the store suite against a server)', () => {
    it('runs the store suite against PostgreSQL', () => {});
  });
}

describe('PGlite data directory', () => {
  it('says which directory PGlite could not open, and what to do, when its files are damaged', async () => {
    const dataDir = join(await mkdtemp(join(tmpdir(), 'pglite-damaged-')), 'data');
    try {
      await (await openStore({ dataDir, pgliteSnapshot: true })).close();
      await writeFile(join(dataDir, 'global', 'pg_control'), 'not a control file'); // cut short
      const refused = await openStore({ dataDir }).then(
        async (store) => (await store.close(), undefined),
        (error: Error) => error,
      );
      expect(refused?.message).toMatch(new RegExp(`^PGlite could not open the database in ${dataDir} \\(.+\\): its files are damaged`));
      expect(refused?.message).toContain('Start on a new data directory, or put back a copy of this one');
      // Its lock was released: the next start is refused the same way, not told the directory is in use.
      await expect(openStore({ dataDir })).rejects.toThrow(/^PGlite could not open the database/);
    } finally {
      await rm(dirname(dataDir), { recursive: true, force: true });
    }
  }, 60_000);

  it('keeps sellers, credentials and the signing key across a restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pglite-'));
    try {
      const first = await startTestServer({ config: { dataDir } });
      const token = (await first.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token;
      await first.close();

      const second = await startTestServer({ config: { dataDir } });
      try {
        expect(await migrate(second.store)).toEqual([]);
        const jwks = (await second.http.get('/sandbox/v1/jwks')).body;
        const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: ISSUER });
        expect(payload['x-seller-id']).toBe(DEMO_SELLER_ID);
        const again = await second.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm());
        expect(again.status).toBe(200);
      } finally {
        await second.close();
      }
    } finally {
      await Promise.all([rm(dataDir, { recursive: true, force: true }), rm(encryptionKeyFileOf(dataDir), { force: true })]);
    }
  });
});

describe('PostgreSQL store: a server it cannot reach at start', () => {
  it('says which server (host and port, never the user or password) and why, with the code kept', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const failure = await openPostgresStore(`postgres://merchant:pg-password-77@127.0.0.1:${port}/shop`).then(
      () => undefined,
      (error: Error & { code?: string; cause?: unknown }) => error,
    );
    expect(failure?.message).toBe(
      `Cannot connect to the PostgreSQL server at 127.0.0.1:${port} (the database URL): the connection was refused (is PostgreSQL running there, on that port?)`,
    );
    expect(failure?.code).toBe('ECONNREFUSED');
    expect((failure?.cause as Error | undefined)?.message).toMatch(/ECONNREFUSED/);
  });
});

describe('rethrowWithoutValues', () => {
  it('takes out every field of a driver error that may quote a value, and the value its message quotes', () => {
    const secret = 'notification-password-9f8e7d';
    const error = Object.assign(new Error(`invalid input syntax for type json: "${secret}"`), {
      code: '22P02',
      table: 'web_checkout_configurations',
      constraint: 'some_check',
      params: [secret],
      detail: `Token "${secret}" is invalid.`,
      where: `JSON data, line 1: ${secret}`,
      hint: `Perhaps "${secret}"`,
      internalQuery: `SELECT '${secret}'`,
    });
    let thrown: unknown;
    try {
      rethrowWithoutValues(error);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBe(error);
    expect(error).toMatchObject({ code: '22P02', table: 'web_checkout_configurations', constraint: 'some_check', message: 'invalid input syntax for type json: "[redacted]"' });
    for (const field of ['params', 'detail', 'where', 'hint', 'internalQuery']) expect(error).not.toHaveProperty(field);
    expect(`${JSON.stringify(error)} ${error.message} ${error.stack}`).not.toContain(secret);
  });
});
