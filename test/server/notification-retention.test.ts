// NOTIFICATION_RETENTION_DAYS (server/notifications/retention.ts): notification deliveries that are
// over (delivered or abandoned) are deleted with their attempts once their last news is that many
// days old; pending ones never. On every store kind, then through startSandbox on a data directory.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../server/index.ts';
import { createLogger } from '../../server/http/logging.ts';
import { notificationRepository } from '../../server/notifications/repository.ts';
import { notificationRetention, RETENTION_BATCH } from '../../server/notifications/retention.ts';
import { DEMO_SELLER_ID, ensureDemoSeller } from '../../server/sandbox/demo-seller.ts';
import { migrate } from '../../server/store/migrate.ts';
import type { Store } from '../../server/store/store.ts';
import { deref, loadPlatform } from '../support/contract.ts';
import { CapturedLogs } from './support/server.ts';
import { openTestStore, STORE_KINDS } from './support/stores.ts';

const NOW = new Date('2026-11-24T12:00:00Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 24 * 60 * 60_000);
const DEMO = { clientId: 'demo-seller-client', clientSecret: 'demo-seller-secret' };
const doc = loadPlatform();
/** A payload the contract's checkout notification takes (the delivery log answers it as stored). */
const PAYLOAD = JSON.stringify(deref(doc, doc.webhooks!['checkout-notification']!.post.requestBody.content['application/json'].examples.authorized_credit).value);

interface Planted {
  status: 'pending' | 'delivered' | 'abandoned';
  created: Date;
  delivered?: Date;
  attempts?: Date[];
}

/** Stores a delivery as the worker would have left it (next_attempt_at: when its last attempt was due), with its attempts; returns its id. */
async function plant(store: Store, d: Planted): Promise<string> {
  const id = randomUUID();
  const attempts = d.attempts ?? [];
  await store.query(
    `INSERT INTO notification_deliveries (delivery_id, seller_id, event, mode, payload, status, attempts, next_attempt_at, created_at, delivered_at)
     VALUES ($1, $2, 'checkout-notification', 'instant', $3, $4, $5, $6, $7, $8)`,
    [id, DEMO_SELLER_ID, PAYLOAD, d.status, attempts.length, attempts.at(-1) ?? d.created, d.created, d.delivered ?? null],
  );
  for (const [i, at] of attempts.entries()) {
    await store.query(`INSERT INTO notification_attempts (delivery_id, attempt, started_at, url, status_code, latency_ms) VALUES ($1, $2, $3, 'http://127.0.0.1/', 500, 3)`, [
      id,
      i + 1,
      at,
    ]);
  }
  return id;
}

const remaining = async (store: Store) => (await store.query<{ delivery_id: string }>('SELECT delivery_id FROM notification_deliveries ORDER BY delivery_id')).rows.map((r) => r.delivery_id);
const attemptsOf = async (store: Store, ids: string[]) =>
  (await store.query<{ n: number }>('SELECT count(*)::int AS n FROM notification_attempts WHERE delivery_id = ANY($1::uuid[])', [ids])).rows[0]!.n;

for (const kind of STORE_KINDS) {
  describe(`notification retention on ${kind.name}`, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let again: () => Promise<Store>;
    const logs = new CapturedLogs();
    beforeAll(async () => {
      ({ store, drop, again } = await kind.fresh());
      await ensureDemoSeller(store, DEMO, createLogger('silent'));
    });
    afterAll(() => drop());
    beforeEach(async () => {
      await store.query('DELETE FROM notification_deliveries');
      logs.lines.length = 0;
    });

    const retention = (days: number) => notificationRetention({ store, logger: createLogger('info', logs), retentionDays: days, now: () => NOW });

    it('deletes the deliveries over for longer than the retention, with their attempts, and keeps the others', async () => {
      const gone = [
        await plant(store, { status: 'delivered', created: daysAgo(45), delivered: daysAgo(40), attempts: [daysAgo(45), daysAgo(40)] }),
        await plant(store, { status: 'abandoned', created: daysAgo(60), attempts: [daysAgo(60), daysAgo(31)] }),
        await plant(store, { status: 'abandoned', created: daysAgo(90) }), // given up without an attempt (a refused URL)
      ];
      const kept = [
        await plant(store, { status: 'delivered', created: daysAgo(45), delivered: daysAgo(10), attempts: [daysAgo(45), daysAgo(10)] }), // redelivered lately
        await plant(store, { status: 'abandoned', created: daysAgo(60), attempts: [daysAgo(60), daysAgo(29)] }), // its last attempt is recent
        await plant(store, { status: 'pending', created: daysAgo(400), attempts: [daysAgo(400)] }), // never, however old
        await plant(store, { status: 'delivered', created: daysAgo(1), delivered: daysAgo(1), attempts: [daysAgo(1)] }),
      ];
      expect(await retention(30).runOnce()).toBe(3);
      expect(await remaining(store)).toEqual([...kept].sort());
      expect(await attemptsOf(store, gone)).toBe(0);
      expect(await attemptsOf(store, kept)).toBe(6);
      expect(logs.lines.filter((l) => l.msg.startsWith('Deleted'))).toMatchObject([{ level: 30, deleted: 3, retentionDays: 30 }]);
    });

    it('keeps a delivery that a redelivery delivered again while the deletion waited for its row', async () => {
      const id = await plant(store, { status: 'delivered', created: daysAgo(45), delivered: daysAgo(40), attempts: [daysAgo(40)] });
      const other = await again();
      let deleting: Promise<number> | undefined;
      // Another instance holds the row (a redelivery, then its attempt, recorded at NOW) while the
      // DELETE, started meanwhile, read it as 40 days old; it commits, then the DELETE goes on.
      await other.transaction(async (tx) => {
        const repo = notificationRepository(tx);
        expect(await repo.redeliver(DEMO_SELLER_ID, id, NOW)).toBe(true);
        await tx.query(`UPDATE notification_deliveries SET status = 'delivered', delivered_at = $2, attempts = 2 WHERE delivery_id = $1`, [id, NOW]);
        deleting = retention(30).runOnce();
        await new Promise((resolve) => setTimeout(resolve, 300));
      });
      expect(await deleting).toBe(0);
      expect(await remaining(store)).toEqual([id]);
    });

    it('deletes a backlog larger than one batch in one pass, and says nothing when nothing was deleted', async () => {
      const count = 2 * RETENTION_BATCH + 17;
      await store.query(
        `INSERT INTO notification_deliveries (delivery_id, seller_id, event, mode, payload, status, attempts, next_attempt_at, created_at, delivered_at)
         SELECT gen_random_uuid(), $1, 'checkout-notification', 'instant', '{}', 'delivered', 1, $2, $2, $2 FROM generate_series(1, $3)`,
        [DEMO_SELLER_ID, daysAgo(8), count],
      );
      const kept = await plant(store, { status: 'delivered', created: daysAgo(6), delivered: daysAgo(6) });
      expect(await retention(7).runOnce()).toBe(count);
      expect(await remaining(store)).toEqual([kept]);
      expect(logs.lines.filter((l) => l.msg.startsWith('Deleted'))).toMatchObject([{ deleted: count }]);
      logs.lines.length = 0;
      expect(await retention(7).runOnce()).toBe(0);
      expect(await remaining(store)).toEqual([kept]);
      expect(logs.lines).toEqual([]);
    });
  });
}

describe('NOTIFICATION_RETENTION_DAYS in a sandbox', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retention-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('deletes at start the deliveries over for longer, which the delivery log then no longer lists', async () => {
    const dataDir = join(dir, 'data');
    // A data directory a long-running sandbox left: the demo seller's deliveries, one over 40 days ago.
    const store = await openTestStore({ dataDir });
    await migrate(store);
    await ensureDemoSeller(store, DEMO, createLogger('silent'));
    const now = Date.now();
    const old = await plant(store, { status: 'delivered', created: new Date(now - 41 * 86_400_000), delivered: new Date(now - 40 * 86_400_000), attempts: [new Date(now - 40 * 86_400_000)] });
    const recent = await plant(store, { status: 'delivered', created: new Date(now - 86_400_000), delivered: new Date(now - 86_400_000), attempts: [new Date(now - 86_400_000)] });
    await store.close();

    const listed = async (sandbox: Awaited<ReturnType<typeof startSandbox>>) => {
      const { data, response } = await sandbox.admin.GET('/sandbox/v1/notifications', { params: { query: { seller_id: DEMO_SELLER_ID } } });
      expect(response.status).toBe(200);
      return data!.deliveries.map((d) => d.delivery_id).sort();
    };
    // Unset: everything is kept.
    const keeping = await startSandbox({ dataDir });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await listed(keeping)).toEqual([old, recent].sort());
    } finally {
      await keeping.close();
    }
    const pruning = await startSandbox({ dataDir, env: { NOTIFICATION_RETENTION_DAYS: '30' } });
    try {
      await expect.poll(() => listed(pruning), { timeout: 10_000 }).toEqual([recent]);
      const gone = await pruning.admin.GET('/sandbox/v1/notifications/{delivery_id}', { params: { path: { delivery_id: old } } });
      expect(gone.response.status).toBe(404);
      expect(gone.error).toMatchObject({ error_code: 'delivery_not_found' });
    } finally {
      await pruning.close();
    }
  });
});
