// The suites' reused in-memory stores (test/server/support/store-pool.ts): a store handed out again
// must be what a new one is where a suite looks, or suites would see each other's rows.
import { describe, expect, it } from 'vitest';
import { migrate } from '../../server/store/migrate.ts';
import { DEMO_SELLER_ID } from '../../server/sandbox/demo-seller.ts';
import type { PgliteWorkerStore } from '../../server/store/pglite-worker-store.ts';
import { openTestStore } from './support/stores.ts';

const count = async (store: Awaited<ReturnType<typeof openTestStore>>, table: string) =>
  (await store.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

/** Which PGlite a store is: the id of its thread (one per PGlite, server/store/pglite-worker-store.ts). */
const markOf = (store: Awaited<ReturnType<typeof openTestStore>>) => (store as PgliteWorkerStore).thread.threadId;

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
});
