// The suites' reused in-memory stores (test/server/support/store-pool.ts): a store handed out again
// must be what a new one is where a suite looks, or suites would see each other's rows.
import { describe, expect, it } from 'vitest';
import { migrate } from '../../server/store/migrate.ts';
import { DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import type { PgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';
import type { Store } from '../../server/store/store.ts';
import { openTestStore } from './support/stores.ts';

const PLAN = '6d1f0a52-8c3e-4b7a-9e21-0f5c4d3b2a19';

const count = async (store: Store, table: string) =>
  (await store.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

/** Which PGlite a store is: the id of its thread (one per PGlite, server/store/pglite-worker-store.ts). */
const markOf = (store: Store) => (store as PgliteWorkerStore).thread.threadId;

describe('a reused in-memory store', () => {
  it('comes back with no row, its sequences restarted and its session reset, where the previous suite left rows', async () => {
    const first = await openTestStore({});
    await migrate(first);
    await first.query(
      `INSERT INTO sellers (seller_id, merchant_id, seller_code, trade_name, email, country, currencies, services, payments, tenant)
       VALUES ($1, 'm', 'c', 't', 'e@example.com', 'BR', '{BRL}', '{}', '{}', 'sandbox')`,
      [DEMO_SELLER_ID],
    );
    await first.query(`INSERT INTO recurrence_audit (seller_id, actor, client_id, action, object_id) VALUES ($1, 'a', 'c', 'x', 'o')`, [DEMO_SELLER_ID]);
    // A subscription on its plan: rows that reference each other (subscriptions.plan_id has no ON DELETE CASCADE).
    await first.query(
      `INSERT INTO plans (plan_id, seller_id, name, amount, currency, payment_types, period_type, billing_cycle, status, create_date)
       VALUES ($1, $2, 'p', 100, 'BRL', 'credit_card', 'monthly', 1, 'active', now())`,
      [PLAN, DEMO_SELLER_ID],
    );
    await first.query(
      `INSERT INTO subscriptions (subscription_id, seller_id, plan_id, order_id, customer_id, create_date, payment_date, status, status_details, payment_method, payment_type, card_number_token)
       VALUES (gen_random_uuid(), $1, $2, 'o', 'c', now(), 1, 'active', 'ok', 'credit', '{}', 't')`,
      [DEMO_SELLER_ID, PLAN],
    );
    await first.exec(`SET TimeZone = 'Asia/Tokyo'`);
    const before = markOf(first);
    const zone = (await first.query<{ TimeZone: string }>('SHOW TimeZone')).rows[0]!.TimeZone;
    await first.close();
    await expect(first.query('SELECT 1')).rejects.toThrow('The store is closed');

    const second = await openTestStore({});
    try {
      expect(markOf(second)).toBe(before); // the same PGlite, handed out again
      expect(await count(second, 'sellers')).toBe(0);
      expect(await count(second, 'recurrence_audit')).toBe(0);
      expect(await count(second, 'plans')).toBe(0);
      expect(await count(second, 'subscriptions')).toBe(0);
      expect(await count(second, 'schema_migrations')).toBeGreaterThan(0);
      const { rows } = await second.query<{ audit_id: string }>(
        `INSERT INTO recurrence_audit (seller_id, actor, client_id, action, object_id) VALUES ($1, 'a', 'c', 'x', 'o') RETURNING audit_id`,
        [DEMO_SELLER_ID],
      );
      expect(Number(rows[0]!.audit_id)).toBe(1);
      expect((await second.query<{ TimeZone: string }>('SHOW TimeZone')).rows[0]!.TimeZone).not.toBe(zone);
    } finally {
      await second.close();
    }
  });

  it('is not handed out again once a suite changed its schema: the next suite gets a new store', async () => {
    const changed = await openTestStore({});
    const before = markOf(changed);
    await changed.exec('CREATE TABLE left_behind (v int)');
    await changed.close();
    const next = await openTestStore({});
    try {
      expect(markOf(next)).not.toBe(before);
      expect((await next.query(`SELECT 1 FROM pg_tables WHERE tablename = 'left_behind'`)).rowCount).toBe(0);
    } finally {
      await next.close();
    }
  });

  it('is not shared with a store opened with options of its own (a key here)', async () => {
    const plain = await openTestStore({});
    const before = markOf(plain);
    await plain.close();
    const keyed = await openTestStore({ encryptionKey: 'a'.repeat(64) });
    try {
      expect(markOf(keyed)).not.toBe(before);
    } finally {
      await keyed.close();
    }
  });

  it("refuses, from its close on, what a suite's lease still holds: a transaction in flight fails its next statement and rolls back, announcements go nowhere", async () => {
    const first = await openTestStore({});
    const mark = markOf(first);
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    const inFlight = first.transaction(async (tx) => {
      await tx.query(`INSERT INTO recurrence_audit (seller_id, actor, client_id, action, object_id) VALUES ($1, 'a', 'c', 'late', 'o')`, [DEMO_SELLER_ID]);
      await paused;
      await tx.query(`INSERT INTO recurrence_audit (seller_id, actor, client_id, action, object_id) VALUES ($1, 'a', 'c', 'later', 'o')`, [DEMO_SELLER_ID]);
    });
    const closed = first.close();
    release();
    await expect(inFlight).rejects.toThrow('The store is closed');
    await closed;
    const second = await openTestStore({});
    try {
      expect(markOf(second)).toBe(mark);
      expect(await count(second, 'recurrence_audit')).toBe(0); // rolled back, not committed then emptied
      let heard = 0;
      second.onAnnounced!('notification-due', () => heard++);
      first.announce!('notification-due');
      first.onAnnounced!('notification-due', () => (heard += 100));
      second.announce!('notification-due');
      expect(heard).toBe(1); // only its own listener, for its own announcement
    } finally {
      await second.close();
    }
  });

  it('keeps at most two idle stores however many close at once', async () => {
    const opened = await Promise.all([openTestStore({}), openTestStore({}), openTestStore({})]);
    const marks = new Set(opened.map(markOf));
    await Promise.all(opened.map((store) => store.close()));
    const again = await Promise.all([openTestStore({}), openTestStore({}), openTestStore({})]);
    try {
      expect(again.filter((store) => marks.has(markOf(store)))).toHaveLength(2);
    } finally {
      await Promise.all(again.map((store) => store.close()));
    }
  });
});
