// Failing receivers: a merchant endpoint that is down (connection refused), answers 500, hangs past
// the attempt timeout, answers too slowly and then slowly but in time, before it recovers. With a
// fast retry policy and a fake clock, every notification is delivered at least once, none is lost,
// every duplicate is identical to the first copy, and no delivery uses more attempts than allowed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../server/http/logging.ts';
import { createDeliveryWorker, type NotificationTarget } from '../../server/notifications/delivery.ts';
import { enqueueCheckoutNotification } from '../../server/notifications/outbox.ts';
import type { RetryPolicy } from '../../server/notifications/retry-policy.ts';
import { DEMO_SELLER_ID, ensureDemoSeller } from '../../server/sandbox/demo-seller.ts';
import type { Store } from '../../server/store/store.ts';
import { deref, loadPlatform } from '../support/contract.ts';
import { CapturedLogs } from '../server/support/server.ts';
import { STORE_KINDS } from '../server/support/stores.ts';

const doc = loadPlatform();
const media = doc.webhooks!['checkout-notification']!.post.requestBody.content['application/json'];
const PAYLOAD = deref(doc, media.examples.authorized_credit).value;
// The contract's 10 attempts; short delays (on a fake clock) and a short timeout so hangs end quickly,
// yet long enough that a loaded machine does not time out the answers meant to arrive in time.
const POLICY: RetryPolicy = { maxAttempts: 10, baseDelayMs: 1_000, maxDelayMs: 60_000, attemptTimeoutMs: 1_000 };
const COUNT = 12;

type Behaviour = 'down' | 500 | 'hang' | 'too-slow' | 'slow' | 200;
/** What the endpoint does on each pass of the worker, then 200 for ever. */
const SCRIPT: Behaviour[] = ['down', 500, 'down', 'hang', 500, 'too-slow', 'slow', 500];

/** A merchant endpoint on a fixed loopback port whose behaviour the test switches; 'down' closes the port. */
async function flakyMerchant() {
  const received: string[] = [];
  let behaviour: Behaviour = 200;
  let server: Server | undefined;
  let port = 0;
  const listen = async () => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      received.push(Buffer.concat(chunks).toString('utf8'));
      if (behaviour === 'hang') return; // never answers
      const delay = behaviour === 'too-slow' ? 2 * POLICY.attemptTimeoutMs : behaviour === 'slow' ? 100 : 0;
      setTimeout(() => res.writeHead(behaviour === 500 ? 500 : 200, { 'content-type': 'text/plain' }).end('ok'), delay);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server!.address() as AddressInfo).port;
  };
  const close = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.closeAllConnections();
      server.close(() => resolve());
      server = undefined;
    });
  await listen();
  return {
    url: () => `http://127.0.0.1:${port}/`,
    received,
    async become(next: Behaviour) {
      if (next === 'down' && server) await close();
      if (next !== 'down' && !server) await listen();
      behaviour = next;
    },
    close,
  };
}

for (const kind of STORE_KINDS) {
  describe(`failing receivers on ${kind.name}`, () => {
    let store: Store;
    let drop: () => Promise<void>;
    const logger = createLogger('info', new CapturedLogs());

    beforeAll(async () => {
      ({ store, drop } = await kind.fresh());
      await ensureDemoSeller(store, { clientId: 'demo-seller-client', clientSecret: 'demo-seller-secret' }, logger);
    });
    afterAll(() => drop());

    it('delivers every notification at least once after the endpoint recovers, duplicates identical', async () => {
      const merchant = await flakyMerchant();
      let clock = new Date('2026-11-22T12:00:00Z');
      const target: NotificationTarget = { url: merchant.url(), user: 'loja', password: 'senha' };
      const worker = createDeliveryWorker({ store, logger, policy: POLICY, now: () => clock, resolveTarget: async () => target, batchSize: 50 });
      const sent = new Map<string, unknown>();
      for (let i = 0; i < COUNT; i++) {
        const payload = { ...PAYLOAD, order_id: `PED-2026-${String(900 + i).padStart(6, '0')}` };
        const id = await store.transaction((tx) => enqueueCheckoutNotification(tx, DEMO_SELLER_ID, payload, clock));
        sent.set(id, payload);
      }

      try {
        for (const behaviour of [...SCRIPT, 200, 200] as Behaviour[]) {
          await merchant.become(behaviour);
          await worker.runOnce();
          // Past every retry delay and every lease: all pending deliveries are due on the next pass.
          clock = new Date(clock.getTime() + 2 * 60_000);
        }
      } finally {
        await merchant.close();
      }

      const { rows } = await store.query<{ delivery_id: string; status: string; attempts: number }>(
        'SELECT delivery_id, status, attempts FROM notification_deliveries',
      );
      expect(rows).toHaveLength(COUNT);
      for (const row of rows) {
        expect(row.status, row.delivery_id).toBe('delivered');
        expect(row.attempts).toBeLessThanOrEqual(POLICY.maxAttempts);
      }
      // None lost: each payload reached the merchant; duplicates (from hangs and late answers) are identical.
      const byOrder = new Map<string, string[]>();
      for (const body of merchant.received) {
        const order = JSON.parse(body).order_id as string;
        byOrder.set(order, [...(byOrder.get(order) ?? []), body]);
      }
      for (const payload of sent.values()) {
        const copies = byOrder.get((payload as { order_id: string }).order_id) ?? [];
        expect(copies.length).toBeGreaterThanOrEqual(1);
        expect(new Set(copies).size).toBe(1);
        expect(JSON.parse(copies[0]!)).toEqual(payload);
      }
      // The script made duplicates on purpose (the hang and the late answer were received): prove it.
      expect(merchant.received.length).toBeGreaterThan(COUNT);
      // Every attempt is recorded, the successful one with a 200.
      const attempts = await store.query<{ n: number; ok: number }>(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE status_code = 200)::int AS ok FROM notification_attempts`,
      );
      expect(attempts.rows[0]).toMatchObject({ ok: COUNT });
    }, 30_000);
  });
}
